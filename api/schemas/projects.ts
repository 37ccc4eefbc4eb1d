import { z } from 'zod';
import { id, PageQuery, Slug, Timestamp } from './common.ts';

export const ProjectStatus = z.enum(['active', 'suspended', 'deleted']);

/** A repository URL with scheme https, http, ssh, git or file. */
/**
 * A repository git can read: an https, http, ssh, git or file URL, the scp-like
 * `git@github.com:owner/repo.git`, or an absolute path on the build machine. The server checks
 * further (hosts builds may reach, where local repositories may be).
 */
export const RepositoryUrl = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .refine(
    (value) =>
      /^(https?|ssh|git|file):\/\//i.test(value) || /^[\w.-]+@[\w.-]+:/.test(value) || value.startsWith('/'),
    'must be an https, http, ssh, git or file URL, an scp-like address such as git@github.com:owner/repo.git, or an absolute path',
  );

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

/**
 * A folder or path inside the repository: relative, with forward slashes, without `..`.
 * Read normalized: `./apps/web/` is `apps/web`, and `.` or `./` is the root (`.`).
 */
export const RepositoryPath = z
  .string()
  .min(1, 'must not be empty (use "." for the root)')
  .max(255, 'must be at most 255 characters')
  .refine(
    (p) => !p.startsWith('/') && !/^[A-Za-z]:/.test(p),
    'must be relative to the repository, such as apps/web',
  )
  .refine((p) => !p.includes('\\') && !p.includes('\0'), 'must use forward slashes and no NUL characters')
  .refine((p) => !p.split('/').includes('..'), 'must stay inside the repository: ".." is not allowed')
  .transform(
    (p) =>
      p
        .split('/')
        .filter((s) => s !== '' && s !== '.')
        .join('/') || '.',
  );

/** A shell command run in the sandbox; an empty string skips that step. */
export const BuildStepCommand = z
  .string()
  .max(1000, 'must be at most 1000 characters')
  .refine((c) => !c.includes('\0'), 'must not contain NUL characters');

/** The four build settings, each null (or absent) to let the build detect it. */
export const BuildSettings = {
  /** Command that installs dependencies (e.g. `pnpm install --frozen-lockfile`); `""` skips the install. */
  installCommand: BuildStepCommand.nullable(),
  /** Command that builds the app (e.g. `npm run build:prod`); `""` skips the build. */
  buildCommand: BuildStepCommand.nullable(),
  /** Folder whose files are served, relative to `rootDirectory` (e.g. `dist`). */
  outputDirectory: RepositoryPath.nullable(),
  /** The app's folder inside the repository (a monorepo's `apps/web`): install and build run there. */
  rootDirectory: RepositoryPath.nullable(),
};

export const Project = z.object({
  /** `prj_` identifier. */
  id: id('prj'),
  /** Host-name-safe name, unique within the organization. */
  name: z.string(),
  /**
   * Git repository the project builds from; credentials in it read as `***` (never returned).
   * `null`: the project has none and deploys uploaded files only (extension).
   */
  repositoryUrl: z.string().nullable(),
  /** Production branch (default `main`). */
  branch: z.string(),
  /**
   * The framework: the setting when there is one, else what the project's newest build detected;
   * `null` until a build has detected one. Each deployment's `framework` says what it was built as.
   */
  framework: z.string().nullable(),
  /**
   * The setting alone (extension): `null` means every build detects the framework, and a
   * detection never becomes the setting. Set it with PATCH `framework`; PATCH `null` goes back to
   * detection.
   */
  frameworkSetting: z.string().nullable().optional(),
  /** Owning organization. */
  organizationId: id('org'),
  /** `active`, `suspended` or `deleted`. */
  status: ProjectStatus,
  /** Production URL; `null` until a production deployment is live. */
  deploymentUrl: z.string().nullable(),
  /** Id of the live production deployment, if any (extension). */
  productionDeploymentId: z.string().nullable(),
  /** Install command; `null`: detected from the lockfile (extension). */
  installCommand: z.string().nullable().optional(),
  /** Build command; `null`: detected from the framework (extension). */
  buildCommand: z.string().nullable().optional(),
  /** Output folder relative to `rootDirectory`; `null`: detected (extension). */
  outputDirectory: z.string().nullable().optional(),
  /** The app's folder inside the repository; `null`: the root (extension). */
  rootDirectory: z.string().nullable().optional(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Project = z.infer<typeof Project>;

export const CreateProjectBody = z.strictObject({
  /** 1-63 lowercase letters, digits, hyphens. */
  name: Slug,
  /**
   * Git repository URL; credentials in it (`https://user:token@host/...`) are stored encrypted and
   * never returned. Omitted (extension): the project deploys uploaded files only (`slipway deploy`,
   * docs/api/uploads.md) until a PATCH gives it one.
   */
  repositoryUrl: RepositoryUrl.optional(),
  /** Production branch, default `main`. */
  branch: BranchName.optional(),
  /** Framework slug; detected on every build when omitted. */
  framework: FrameworkName.optional(),
  /** Organization id (`org_...`) that owns the project. */
  organizationId: z.string().min(1, 'is required'),
  installCommand: BuildSettings.installCommand.optional(),
  buildCommand: BuildSettings.buildCommand.optional(),
  outputDirectory: BuildSettings.outputDirectory.optional(),
  rootDirectory: BuildSettings.rootDirectory.optional(),
});
export type CreateProjectBody = z.infer<typeof CreateProjectBody>;

export const UpdateProjectBody = z
  .strictObject({
    name: Slug.optional(),
    branch: BranchName.optional(),
    /** A framework slug, or null to detect it on every build. */
    framework: FrameworkName.nullable().optional(),
    /** A new repository URL; `***` in place of its credentials keeps the stored ones. */
    repositoryUrl: RepositoryUrl.optional(),
    /** Build settings; null returns one to detection. */
    installCommand: BuildSettings.installCommand.optional(),
    buildCommand: BuildSettings.buildCommand.optional(),
    outputDirectory: BuildSettings.outputDirectory.optional(),
    rootDirectory: BuildSettings.rootDirectory.optional(),
  })
  .refine(
    (b) => Object.keys(b).length > 0,
    'must change at least one of name, branch, framework, repositoryUrl, installCommand, buildCommand, outputDirectory, rootDirectory',
  );
export type UpdateProjectBody = z.infer<typeof UpdateProjectBody>;

export const ListProjectsQuery = PageQuery.extend({
  /** Organization id or name. */
  org: z.string().optional(),
  /** Filter by status; default lists active and suspended projects. */
  status: ProjectStatus.optional(),
});
export type ListProjectsQuery = z.infer<typeof ListProjectsQuery>;
