import { z } from 'zod';
import { id, Timestamp } from './common.ts';
import { BranchName } from './projects.ts';

export const CreateDeployHookBody = z.strictObject({
  /** What calls it (`cms`, `nightly`): 1 to 64 characters, unique within the project; shown on its deployments. */
  name: z
    .string()
    .trim()
    .min(1, 'must be 1 to 64 characters')
    .max(64, 'must be 1 to 64 characters')
    // Shown in deployment messages and pages: no control characters or quotes.
    .regex(/^[^\p{Cc}"]*$/u, 'must not contain control characters or double quotes'),
  /** The branch whose head it builds: production when it is the project's branch, else preview. */
  branch: BranchName,
});
export type CreateDeployHookBody = z.infer<typeof CreateDeployHookBody>;

export const DeployHook = z.object({
  /** `dph_` identifier; also the start of the hook's URL. */
  id: id('dph'),
  /** The name it was given. */
  name: z.string(),
  /** The branch it builds. */
  branch: z.string(),
  /**
   * The hook's URL up to its secret (`.../v1/hooks/deploy/dph_....`): tells hooks apart; the
   * whole URL is shown only once, when the hook is made.
   */
  urlPrefix: z.string(),
  /** E-mail address of the member who made it. */
  createdBy: z.string(),
  /** When it was made. */
  createdAt: Timestamp,
  /** When it last queued (or joined) a deployment; null if never. */
  lastUsedAt: Timestamp.nullable(),
});
export type DeployHook = z.infer<typeof DeployHook>;

/** The answer of creating a hook: the only time `url`, with its secret, is shown. */
export const CreatedDeployHook = DeployHook.extend({
  /** `POST` it (no token, any body) to deploy the branch's head. Shown this once: keep it secret. */
  url: z.string(),
});
export type CreatedDeployHook = z.infer<typeof CreatedDeployHook>;

/** What a POST to a hook's URL answers: the deployment, nothing more about the project. */
export const DeployHookTriggered = z.object({
  /** `dpl_` identifier of the deployment. */
  id: id('dpl'),
  /** The deployment's own URL. */
  url: z.string(),
  /**
   * True (201) when this request queued it; false (200) when the hook's previous deployment had
   * not started building yet, and this request got that one back instead of a second build.
   */
  created: z.boolean(),
});
export type DeployHookTriggered = z.infer<typeof DeployHookTriggered>;
