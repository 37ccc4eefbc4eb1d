import { z } from 'zod';

/** A file's SHA-256: 64 lowercase hexadecimal characters. Files are uploaded and named by it. */
export const Sha256 = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 hash: 64 lowercase hexadecimal characters');
export type Sha256 = z.infer<typeof Sha256>;

/** At most this many hashes per "which are missing" question. */
export const MAX_HASHES_PER_QUESTION = 10_000;

export const MissingFilesBody = z.strictObject({
  /** The hashes of the files a deployment will list. */
  sha256: z
    .array(Sha256)
    .min(1, 'must list at least one hash')
    .max(MAX_HASHES_PER_QUESTION, `must list at most ${MAX_HASHES_PER_QUESTION} hashes; ask in parts`),
});
export type MissingFilesBody = z.infer<typeof MissingFilesBody>;

/** The header an upload carries its grant in (docs/api/uploads.md#uploads-and-the-rate-limit). */
export const UPLOAD_GRANT_HEADER = 'X-Slipway-Upload-Grant';

export const MissingFiles = z.object({
  /** The hashes this organization has not uploaded yet, in the order asked, without repeats. */
  missing: z.array(Sha256),
  /**
   * Present when something is missing: sent as `X-Slipway-Upload-Grant` with the uploads of
   * those files, it keeps them off the hourly rate limit (for an hour, that many uploads).
   */
  uploadGrant: z.string().optional(),
});
export type MissingFiles = z.infer<typeof MissingFiles>;

export const UploadedFile = z.object({
  sha256: Sha256,
  /** Size in bytes. */
  size: z.number().int().nonnegative(),
});
export type UploadedFile = z.infer<typeof UploadedFile>;

/**
 * A relative path with forward slashes (`index.html`, `assets/app.js`): no leading `/`, no `.`
 * or `..` segment, no empty segment, no backslash or control character; at most 1024 characters.
 */
export const FilePath = z
  .string()
  .min(1, 'must not be empty')
  .max(1024, 'must be at most 1024 characters')
  .refine((p) => !p.startsWith('/'), 'must be relative (no leading "/")')
  .refine(
    (p) => ![...p].some((c) => c === '\\' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f),
    'must not contain backslashes or control characters',
  )
  .refine(
    (p) => p.split('/').every((s) => s !== '' && s !== '.' && s !== '..'),
    'must not contain ".", ".." or empty segments',
  );

/** One file of an uploaded deployment. */
export const DeploymentFile = z.strictObject({
  path: FilePath,
  sha256: Sha256,
  /** Size in bytes; must match the uploaded file. */
  size: z.number().int('must be a whole number').nonnegative('must not be negative'),
  /**
   * File mode: `0o644` (420, the default) or `0o755` (493, executable); a full `st_mode` such as
   * 33261 is read by its permission bits. Symbolic links and other kinds are refused.
   */
  mode: z
    .number()
    .int()
    .refine((m) => (m & 0o170000) === 0 || (m & 0o170000) === 0o100000, 'must be the mode of a regular file')
    .default(0o644),
});
export type DeploymentFile = z.infer<typeof DeploymentFile>;
