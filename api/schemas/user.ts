import { z } from 'zod';
import { id, Timestamp } from './common.ts';
import { Plan, Role } from './organizations.ts';

export const User = z.object({
  /** `usr_` identifier. */
  id: id('usr'),
  /** The user's e-mail address, in lower case. */
  email: z.string(),
  /** Every organization the user is a member of, oldest first (the personal one first). */
  organizations: z.array(
    z.object({
      /** `org_` identifier. */
      id: id('org'),
      /** The organization's unique name. */
      name: z.string(),
      /** The user's role in it. */
      role: Role,
      /** Its plan, which sets the user's rate limit. */
      plan: Plan,
    }),
  ),
});
export type User = z.infer<typeof User>;

export const TokenSummary = z.object({
  /** `tok_` identifier. */
  id: id('tok'),
  /** The label given at creation. */
  name: z.string(),
  /** First characters of the token, to recognise it. */
  prefix: z.string(),
  createdAt: Timestamp,
  /** When the token last authenticated a request (to the minute); `null` if never. */
  lastUsedAt: Timestamp.nullable(),
});
export type TokenSummary = z.infer<typeof TokenSummary>;

export const CreatedToken = z.object({
  /** `tok_` identifier, for revoking it. */
  id: id('tok'),
  /** The label given at creation. */
  name: z.string(),
  /** The secret token: shown this once only. */
  token: z.string(),
  createdAt: Timestamp,
});
export type CreatedToken = z.infer<typeof CreatedToken>;

export const CreateTokenBody = z.strictObject({
  /** A label for the token, 1 to 100 characters. */
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
});
export type CreateTokenBody = z.infer<typeof CreateTokenBody>;
