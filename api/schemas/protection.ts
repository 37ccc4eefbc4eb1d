import { z } from 'zod';
import { id, Timestamp } from './common.ts';

/** The answer of making (or rotating) a project's protection bypass secret: the only time it is shown. */
export const CreatedProtectionBypass = z.object({
  /**
   * Send it as `x-slipway-protection-bypass: <secret>` to reach the project's protected hosts from
   * automation (health checks, end-to-end tests). Shown this once; only its SHA-256 is kept.
   */
  secret: z.string(),
  /** When it was made; the project's `protectionBypassCreatedAt`. */
  createdAt: Timestamp,
});
export type CreatedProtectionBypass = z.infer<typeof CreatedProtectionBypass>;

export const CreateShareLinkBody = z.strictObject({
  /** The deployment whose URL the link opens (`dpl_...`); the link opens any host of its project. */
  deploymentId: z.string().min(1, 'is required'),
  /** How long the link works, in hours: 1 to 720 (30 days); default 24. */
  expiresInHours: z
    .number()
    .int('must be a whole number of hours')
    .min(1, 'must be 1 to 720 hours')
    .max(720, 'must be 1 to 720 hours')
    .optional(),
});
export type CreateShareLinkBody = z.infer<typeof CreateShareLinkBody>;

export const ShareLink = z.object({
  /** `psl_` identifier. */
  id: id('psl'),
  /** The page the link opens, without its token. */
  target: z.string(),
  /** E-mail address of the member who made it. */
  createdBy: z.string(),
  createdAt: Timestamp,
  /** After this the link opens nothing. */
  expiresAt: Timestamp,
});
export type ShareLink = z.infer<typeof ShareLink>;

/** The answer of making a share link: the only time `url`, with its token, is shown. */
export const CreatedShareLink = ShareLink.extend({
  /** Open it in a browser, no account needed, until `expiresAt`. */
  url: z.string(),
});
export type CreatedShareLink = z.infer<typeof CreatedShareLink>;
