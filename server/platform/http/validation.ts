import type { z } from 'zod';
import { ApiError, type FieldIssue } from '../../../api/errors.ts';

/** zod issues -> `[{ path, message }]`, naming each unknown field on its own. */
export function toFieldIssues(error: z.ZodError, prefix = ''): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of error.issues) {
    const base = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        out.push({ path: base ? `${base}.${key}` : key, message: 'is not a known field' });
      }
    } else if (issue.code === 'invalid_type' && issue.input === undefined) {
      out.push({ path: base, message: 'is required' });
    } else {
      out.push({ path: base, message: issue.message });
    }
  }
  return out;
}

/** Parses a value or throws a VALIDATION_ERROR naming the fields. */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(value ?? (where === 'body' ? {} : value));
  if (!result.success) throw ApiError.validation(toFieldIssues(result.error));
  return result.data;
}
