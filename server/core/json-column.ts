import type { z } from 'zod';

/**
 * Reads a JSON column (or payload) through its schema: the one way stored JSON is read, so a row
 * that does not hold what the code expects fails here, naming `what` and the first wrong field,
 * instead of further on as a wrong type.
 */
export function decodeJson<S extends z.ZodType>(schema: S, text: string, what: string): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${what} is not JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${what} is not valid: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}
