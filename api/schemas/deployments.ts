import { z } from 'zod';
import { id, PageQuery, Timestamp, wholeNumber } from './common.ts';
import { BranchName } from './projects.ts';
import { DeploymentFile } from './uploads.ts';

/** Lifecycle of a deployment: `queued -> building -> deploying -> live`, or `failed` from the first three. */
export const DeploymentStatus = z.enum(['queued', 'building', 'deploying', 'live', 'failed']);
export type DeploymentStatus = z.infer<typeof DeploymentStatus>;
/** Where a deployment goes live: the project's production URL, or only its own preview URL. */
export const DeploymentTarget = z.enum(['production', 'preview']);
export type DeploymentTarget = z.infer<typeof DeploymentTarget>;

/** A commit SHA or an unambiguous prefix of one: 7 to 40 hex characters, read as lowercase. */
export const CommitHash = z
  .string()
  .regex(/^[0-9a-f]{7,40}$/i, 'must be 7 to 40 hexadecimal characters')
  .transform((s) => s.toLowerCase());

export const Deployment = z.object({
  /** `dpl_` identifier. */
  id: id('dpl'),
  /** The project it belongs to. */
  projectId: id('prj'),
  /** queued, building, deploying, live or failed. */
  status: DeploymentStatus,
  /** `production` or `preview` (extension). */
  target: DeploymentTarget,
  /** Branch or ref it builds. */
  branch: z.string(),
  /** Full commit SHA once checked out (or the pinned commit until then). */
  commitHash: z.string().nullable(),
  /** Message of the built commit, once checked out. */
  commitMessage: z.string().nullable(),
  /** E-mail address of the commit's author. */
  author: z.string().nullable(),
  /** Message given when the deployment was created (extension). */
  message: z.string().nullable(),
  /** How long the build took, in milliseconds. */
  buildDurationMs: z.number().nullable(),
  /** How long it took from build to live, in milliseconds. */
  deployDurationMs: z.number().nullable(),
  /** The deployment's own URL; it keeps serving this deployment. */
  url: z.string(),
  /**
   * A preview's branch URL: it serves the newest live preview of the deployment's branch
   * (docs/edge.md#branch-urls). Null for production deployments, whose URL is the project's
   * (extension; absent from servers before it).
   */
  branchUrl: z.string().nullable().optional(),
  /** Why the deployment failed (extension). */
  errorMessage: z.string().nullable(),
  /** Id of the deployment this one rolled back from. */
  rollbackFrom: z.string().nullable(),
  /** On a rollback: the deployment whose build it serves again (extension). */
  rollbackTo: z.string().nullable().optional(),
  /** When it was created. */
  createdAt: Timestamp,
  /** When it went live (extension). */
  readyAt: Timestamp.nullable(),
  /** `git` (cloned), `upload` (uploaded files, built) or `prebuilt` (uploaded files, served as they are) (extension). */
  source: z.enum(['git', 'upload', 'prebuilt']).optional(),
  /** When it was promoted to production (extension). */
  promotedAt: Timestamp.nullable(),
  /** The framework slug it was built as (the project's setting, or detected); null until built (extension). */
  framework: z.string().nullable().optional(),
  /** The deployment's page in the dashboard, under the service's public URL (extension). */
  dashboardUrl: z.string().optional(),
  /**
   * Whether the deployment's own URL and its branch URL are protected: a visitor needs a member's
   * sign-in, a share link or the bypass secret (docs/protection.md; extension, absent from
   * servers before it).
   */
  protected: z.boolean().optional(),
});
export type Deployment = z.infer<typeof Deployment>;

export const CreateDeploymentBody = z
  .strictObject({
    /** Branch or ref to build; default the project's branch. */
    branch: z
      .union([BranchName, z.string().regex(/^refs\/[A-Za-z0-9._/-]+$/)], {
        error: 'must be a valid git ref name',
      })
      .optional(),
    /** Free-form message describing the deployment. */
    message: z.string().max(1000, 'must be at most 1000 characters').optional(),
    /** Pin an exact commit (extension). */
    commitHash: CommitHash.optional(),
    /** `production` or `preview`; default production for the project's branch, else preview (extension). */
    target: DeploymentTarget.optional(),
    /**
     * Deploy these uploaded files instead of cloning the repository (extension; see
     * docs/api/uploads.md). `branch` and `commitHash` then only label the deployment.
     */
    files: z
      .array(DeploymentFile)
      .min(1, 'must list at least one file')
      .superRefine((files, ctx) => {
        const seen = new Map<string, number>();
        files.forEach((f, i) => {
          const first = seen.get(f.path);
          if (first !== undefined) {
            ctx.addIssue({
              code: 'custom',
              path: [i, 'path'],
              message: `repeats the path of files.${first}`,
            });
          } else seen.set(f.path, i);
        });
        // A path cannot be a file and a directory at once.
        files.forEach((f, i) => {
          const parts = f.path.split('/');
          for (let n = 1; n < parts.length; n++) {
            const dir = seen.get(parts.slice(0, n).join('/'));
            if (dir !== undefined) {
              ctx.addIssue({
                code: 'custom',
                path: [i, 'path'],
                message: `is inside files.${dir}, which is a file`,
              });
              break;
            }
          }
        });
      })
      .optional(),
    /** With `files`: they are the output to serve as they are, without a build (extension). */
    prebuilt: z.boolean().optional(),
    /** `false`: build without the project's build cache, neither restoring nor saving it (extension). */
    cache: z.boolean().optional(),
  })
  .refine((b) => !b.prebuilt || b.files !== undefined, {
    path: ['prebuilt'],
    message: 'needs files: a prebuilt deployment is made of uploaded files',
  });
export type CreateDeploymentBody = z.infer<typeof CreateDeploymentBody>;

/** `POST /v1/deployments/<id>/rollback`: by default to the production deployment live before it. */
export const RollbackBody = z.strictObject({
  /**
   * Roll back to this earlier production deployment of the project (`dpl_...`) instead of the
   * one live just before: any that went live before the one rolled back from (extension).
   */
  to: z
    .string()
    .regex(/^dpl_[a-z0-9]+$/, 'must be a deployment id (dpl_...)')
    .optional(),
});
export type RollbackBody = z.infer<typeof RollbackBody>;

export const ListDeploymentsQuery = PageQuery.extend({
  /** Only deployments in this state. */
  status: DeploymentStatus.optional(),
  /** Only deployments of this branch (exact match). */
  branch: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters').optional(),
  /** Only production or only preview deployments (extension). */
  target: DeploymentTarget.optional(),
  /** Only deployments whose commit starts with this hash (extension). */
  commitHash: CommitHash.optional(),
});
export type ListDeploymentsQuery = z.infer<typeof ListDeploymentsQuery>;

/** The three logs a deployment keeps. */
export const LogType = z.enum(['build', 'runtime', 'error']);
export type LogType = z.infer<typeof LogType>;

export const LogsQuery = z.strictObject({
  /** build (default), runtime or error. */
  type: LogType.default('build'),
  /** Keep the last N lines (1-10000, default 100). */
  tail: wholeNumber('tail', 1, 10_000, 100),
  /** Stream as server-sent events until the deployment ends (extension). */
  follow: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true'),
});
export type LogsQuery = z.infer<typeof LogsQuery>;

export const DeploymentLogs = z.object({
  /** Lines separated by newline, oldest first. */
  logs: z.string(),
  /** Which log these lines come from. */
  type: LogType,
});
export type DeploymentLogs = z.infer<typeof DeploymentLogs>;

/** `data` of the `end` event that closes a followed log stream. */
export const LogStreamEnd = z.object({
  /** The deployment's final state: `live` or `failed`. */
  status: DeploymentStatus,
  /** Why it failed, when it did. */
  errorMessage: z.string().nullable(),
});
export type LogStreamEnd = z.infer<typeof LogStreamEnd>;
