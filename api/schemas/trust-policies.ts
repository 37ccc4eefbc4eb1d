import { z } from 'zod';
import { Timestamp } from './common.ts';

/** What a policy's workflows may do: `developer` deploys, promotes and rolls back; `viewer` reads. Never more. */
export const TrustRole = z.enum(['viewer', 'developer'], {
  error: 'must be viewer or developer: a workflow never gets admin or owner',
});

const list = (what: string, item: z.ZodType<string>) =>
  z.array(item).min(1, `must list at least one ${what}, or be left out for any`).max(50).optional();

export const CreateTrustPolicyBody = z.strictObject({
  /** `owner/name` of the GitHub repository whose workflows are trusted. */
  repository: z
    .string()
    .regex(/^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/, 'must be owner/name, e.g. acme/web')
    .transform((s) => s.toLowerCase()),
  /** Its numeric id (GitHub's `repository_id` claim): a renamed or re-created repository does not inherit trust. */
  repositoryId: z
    .union([z.number().int().positive(), z.string().regex(/^\d+$/)], {
      error: 'must be the numeric id of the repository (gh api repos/OWNER/NAME --jq .id)',
    })
    .transform(String),
  /** Refs the workflow may run for, as globs (`refs/heads/main`, `refs/tags/v*`); any when left out. */
  refs: list(
    'ref',
    z.string().regex(/^refs\/\S+$/, 'must be a full ref such as refs/heads/main (globs allowed)'),
  ),
  /** GitHub environments the job must run in (`environment` claim); any when left out. */
  environments: list('environment', z.string().min(1).max(255)),
  /** The workflow file, e.g. `.github/workflows/deploy.yml`; any when left out. */
  workflow: z
    .string()
    .regex(
      /^\.github\/workflows\/[^@\s]+\.ya?ml$/,
      'must be a workflow file such as .github/workflows/deploy.yml',
    )
    .optional(),
  /** Events that may trigger the workflow (`push`, `workflow_dispatch`...); any when left out. */
  events: list('event', z.string().regex(/^[a-z_]+$/, 'must be a GitHub event name such as push')),
  /** Default `developer`. */
  role: TrustRole.default('developer'),
});
export type CreateTrustPolicyBody = z.infer<typeof CreateTrustPolicyBody>;

export const TrustPolicy = z.object({
  /** `tpo_` identifier. */
  id: z.string(),
  projectId: z.string(),
  repository: z.string(),
  repositoryId: z.string(),
  refs: z.array(z.string()).nullable(),
  environments: z.array(z.string()).nullable(),
  workflow: z.string().nullable(),
  events: z.array(z.string()).nullable(),
  role: TrustRole,
  createdAt: Timestamp,
});
export type TrustPolicy = z.infer<typeof TrustPolicy>;

export const ExchangeOidcBody = z.strictObject({
  /** The workflow's OIDC token (`core.getIDToken(audience)`). */
  token: z.string().min(20, 'must be the OIDC token of a GitHub Actions job').max(16_384),
  /** The project, by id or name; by name among projects that trust the token's repository. */
  project: z.string().min(1).max(100).optional(),
});

export const ExchangedToken = z.object({
  /** A Slipway token for the project alone, shown this once and never listed. */
  token: z.string(),
  projectId: z.string(),
  role: TrustRole,
  expiresAt: Timestamp,
});
export type ExchangedToken = z.infer<typeof ExchangedToken>;
