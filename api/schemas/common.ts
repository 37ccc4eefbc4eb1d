import { z } from 'zod';

/** ISO 8601 UTC timestamp with milliseconds, e.g. `2026-11-22T10:00:00.000Z`. */
export const Timestamp = z.string().describe('ISO 8601 UTC timestamp with milliseconds');

/** A prefixed random identifier such as `prj_...`. */
export const id = (prefix: string) =>
  z
    .string()
    .regex(new RegExp(`^${prefix}_[A-Za-z0-9_-]{16,}$`), `must be an id starting with ${prefix}_`)
    .describe(`identifier starting with ${prefix}_`);

/** Host-name-safe name shared by projects and organizations. */
export const Slug = z
  .string()
  .min(1, 'must be 1 to 63 characters')
  .max(63, 'must be 1 to 63 characters')
  .regex(
    /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/,
    'must be lowercase letters, digits and hyphens, not starting or ending with a hyphen',
  );

const wholeNumber = (name: string, min: number, max: number, dflt: number) =>
  z.coerce
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(min, `${name} must be between ${min} and ${max}`)
    .max(max, `${name} must be between ${min} and ${max}`)
    .default(dflt);

/**
 * `page` and `limit` of every list, or `cursor` (the `meta.next` of the page before) and `limit`.
 * A page number costs more the deeper it goes and counts `total`; a cursor costs the same at any
 * depth, never skips or repeats an item when others are added meanwhile, and counts nothing.
 */
export const PageQuery = z.strictObject({
  /** 1-based page number. */
  page: wholeNumber('page', 1, 1_000_000, 1),
  /** Items per page, 1 to 100. */
  limit: wholeNumber('limit', 1, 100, 10),
  /** Where the page starts: `meta.next` of the previous page; `page` is then left out. */
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,512}$/, 'cursor must be the meta.next value of a previous page of this list')
    .optional(),
});
export type PageQuery = z.infer<typeof PageQuery>;

export { wholeNumber };

/** `meta` of every list response. */
export const PageMeta = z.object({
  /** Current page, 1-based (answers to `page`, not to `cursor`). */
  page: z.number().int().optional(),
  /** Items per page. */
  limit: z.number().int(),
  /** Items in all pages (answers to `page`, not to `cursor`). */
  total: z.number().int().optional(),
  /** `cursor` of the next page; null on the last page. */
  next: z.string().nullable().optional(),
});
export type PageMeta = z.infer<typeof PageMeta>;

/** Body of `DELETE` answers: `{ success: true, message }`. */
export const DeletedResponse = z.object({ success: z.literal(true), message: z.string() });

/** Error envelope of the reference interface. */
export const ErrorEnvelope = z.object({
  success: z.literal(false),
  error: z.object({
    /** Machine-readable code such as `VALIDATION_ERROR`. */
    code: z.string(),
    /** What went wrong and what to do about it. */
    message: z.string(),
    /** For `VALIDATION_ERROR`: a list of `{ path, message }`. */
    details: z.unknown().optional(),
  }),
});

/** Wraps a data schema in the success envelope. */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });
/** Wraps an item schema in the list envelope with `meta`. */
export const listEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({ success: z.literal(true), data: z.array(item), meta: PageMeta });
