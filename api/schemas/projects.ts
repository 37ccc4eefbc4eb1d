import { z } from 'zod';
import { id, PageQuery, Slug, Timestamp } from './common.ts';

export const ProjectStatus = z.enum(['active', 'suspended', 'deleted']);

/** A repository URL with scheme https, http, ssh, git or file. */
export const RepositoryUrl = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .refine((value) => {
    try {
      return ['https:', 'http:', 'ssh:', 'git:', 'file:'].includes(new URL(value).protocol);
    } catch {
      return false;
    }
  }, 'must be a URL with scheme https, http, ssh, git or file');

export const BranchName = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .regex(/^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]+$/, 'must be a valid git ref name');

export const FrameworkName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9.-]*$/, 'must be a framework slug such as "vite" or "nextjs"');

export const Project = z.object({
  /** `prj_` identifier. */
  id: id('prj'),
  /** Host-name-safe name, unique within the organization. */
  name: z.string(),
  /** Git repository the project builds from; credentials in it read as `***` (never returned). */
  repositoryUrl: z.string(),
  /** Production branch (default `main`). */
  branch: z.string(),
  /** Framework slug; `null` until known. */
  framework: z.string().nullable(),
  /** Owning organization. */
  organizationId: id('org'),
  /** `active`, `suspended` or `deleted`. */
  status: ProjectStatus,
  /** Production URL; `null` until a production deployment is live. */
  deploymentUrl: z.string().nullable(),
  /** Id of the live production deployment, if any (extension). */
  productionDeploymentId: z.string().nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Project = z.infer<typeof Project>;

export const CreateProjectBody = z.strictObject({
  /** 1-63 lowercase letters, digits, hyphens. */
  name: Slug,
  /** Git repository URL; credentials in it (`https://user:token@host/...`) are stored encrypted and never returned. */
  repositoryUrl: RepositoryUrl,
  /** Production branch, default `main`. */
  branch: BranchName.optional(),
  /** Framework slug; detected when omitted. */
  framework: FrameworkName.optional(),
  /** Organization id (`org_...`) that owns the project. */
  organizationId: z.string().min(1, 'is required'),
});
export type CreateProjectBody = z.infer<typeof CreateProjectBody>;

export const UpdateProjectBody = z
  .strictObject({
    name: Slug.optional(),
    branch: BranchName.optional(),
    framework: FrameworkName.nullable().optional(),
    /** A new repository URL; `***` in place of its credentials keeps the stored ones. */
    repositoryUrl: RepositoryUrl.optional(),
  })
  .refine(
    (b) => Object.keys(b).length > 0,
    'must change at least one of name, branch, framework, repositoryUrl',
  );
export type UpdateProjectBody = z.infer<typeof UpdateProjectBody>;

export const ListProjectsQuery = PageQuery.extend({
  /** Organization id or name. */
  org: z.string().optional(),
  /** Filter by status; default lists active and suspended projects. */
  status: ProjectStatus.optional(),
});
export type ListProjectsQuery = z.infer<typeof ListProjectsQuery>;
