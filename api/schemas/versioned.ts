import { z } from 'zod';
import { id, Slug } from './common.ts';
import { DeploymentStatus } from './deployments.ts';
import { BranchName, ProjectStatus, RepositoryUrl } from './projects.ts';

/** Body of `POST /api/v1/projects`: the project goes into the caller's personal organization. */
export const CreateProjectV1Body = z.strictObject({
  /** 1-63 lowercase letters, digits, hyphens; unique within the organization. */
  name: Slug,
  /** Git repository URL (https, http, ssh, git or file). */
  repositoryUrl: RepositoryUrl,
  /** Production branch, default `main`. */
  branch: BranchName.optional(),
});
export type CreateProjectV1Body = z.infer<typeof CreateProjectV1Body>;

/** What `POST /api/v1/projects` answers (201). */
export const ProjectV1 = z.object({
  /** `prj_` identifier. */
  id: id('prj'),
  /** The project's name. */
  name: z.string(),
  /** `active` on creation. */
  status: ProjectStatus,
});
export type ProjectV1 = z.infer<typeof ProjectV1>;

/** Body of `POST /api/v1/deployments`. */
export const CreateDeploymentV1Body = z.strictObject({
  /** The project to deploy (`prj_...`), in any organization where the caller is a developer or more. */
  projectId: z.string().min(1, 'is required').max(128, 'must be at most 128 characters'),
  /** Branch to build; default the project's branch. */
  branch: BranchName.optional(),
});
export type CreateDeploymentV1Body = z.infer<typeof CreateDeploymentV1Body>;

/** What `POST /api/v1/deployments` answers (201). */
export const DeploymentV1 = z.object({
  /** `dpl_` identifier. */
  id: id('dpl'),
  /** `queued` on creation. */
  status: DeploymentStatus,
});
export type DeploymentV1 = z.infer<typeof DeploymentV1>;

/** Every error of the versioned description: no envelope. */
export const ErrorV1 = z.object({
  /** Machine-readable code such as `VALIDATION_ERROR` or `PAYMENT_REQUIRED`. */
  code: z.string(),
  /** What went wrong and what to do about it. */
  message: z.string(),
});
export type ErrorV1 = z.infer<typeof ErrorV1>;

/** The body of a 402: the error plus the id of the fresh challenge in `WWW-Authenticate`. */
export const PaymentRequiredV1 = ErrorV1.extend({
  /** Always `PAYMENT_REQUIRED`. */
  code: z.literal('PAYMENT_REQUIRED'),
  /** Id of the challenge offered in `WWW-Authenticate`. */
  challengeId: z.string(),
});
export type PaymentRequiredV1 = z.infer<typeof PaymentRequiredV1>;
