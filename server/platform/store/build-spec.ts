import { z } from 'zod';
import type { ProjectsTable } from './schema.ts';
import { cacheLanes } from './cache-lanes.ts';
import { decodeJson } from '../../core/json-column.ts';

/** A file of an `upload` or `prebuilt` deployment, as the API checked it. */
export const SourceFile = z
  .object({
    /** Relative path inside the deployment, `/`-separated. */
    path: z.string().min(1),
    /** Where the bytes are in the upload store. */
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    size: z.number().int().nonnegative(),
    /** 0o755 (executable) or 0o644. */
    mode: z.union([z.literal(0o755), z.literal(0o644)]),
  })
  .strict();
export type SourceFile = z.infer<typeof SourceFile>;

/** A project's own build settings (null: detect; an empty command: skip the step). */
export const BuildSettings = z
  .object({
    installCommand: z.string().nullable(),
    buildCommand: z.string().nullable(),
    /** Relative to rootDirectory. */
    outputDirectory: z.string().nullable(),
    /** A folder inside the repository. */
    rootDirectory: z.string().nullable(),
  })
  .strict();
export type BuildSettings = z.infer<typeof BuildSettings>;

const Lanes = z.object({
  save: z.string(),
  restore: z.array(
    z.union([
      z.object({ lane: z.string() }).strict(),
      z.object({ newestOf: z.enum(['production', 'preview', 'ref']) }).strict(),
    ]),
  ),
});

/**
 * What a deployment builds, decided when it is queued and stored with it
 * (`deployments.build_spec`): a retry, a worker that takes over, or a redeploy builds exactly
 * this, whatever the project's settings have become since. The repository is the project's.
 */
export const BuildSpec = z
  .object({
    /** Where the files come from. */
    source: z.discriminatedUnion('kind', [
      z
        .object({
          kind: z.literal('git'),
          /** Branch name or full ref (`refs/pull/12/head`). */
          ref: z.string().min(1),
          /** Pinned commit (7 to 40 hex characters); null: the head of `ref` when the build starts. */
          commit: z.string().nullable(),
        })
        .strict(),
      /** Uploaded files, built. */
      z.object({ kind: z.literal('upload'), files: z.array(SourceFile) }).strict(),
      /** Uploaded files, served as they are: no build. */
      z.object({ kind: z.literal('prebuilt'), files: z.array(SourceFile) }).strict(),
    ]),
    /** The project's framework setting; null: detect. */
    framework: z.string().nullable(),
    settings: BuildSettings,
    /** The build cache's lanes (cache-lanes.ts); null when the deployment asked for none. */
    cache: Lanes.nullable(),
    /** Whose environment variables the build gets. */
    target: z.enum(['production', 'preview']),
  })
  .strict();
export type BuildSpec = z.infer<typeof BuildSpec>;

/** The project's columns a spec is decided from. */
export type SpecProject = Pick<
  ProjectsTable,
  'branch' | 'framework' | 'install_command' | 'build_command' | 'output_directory' | 'root_directory'
>;

/** The spec of a new deployment of `project`: its settings as they are now. */
export function decideBuildSpec(
  project: SpecProject,
  d: {
    target: 'production' | 'preview';
    /** The deployment's branch (uploaded files carry one as a label): the cache's lane. */
    branch: string;
    source: BuildSpec['source'];
    cache: boolean;
  },
): BuildSpec {
  return {
    source: d.source,
    framework: project.framework,
    settings: {
      installCommand: project.install_command,
      buildCommand: project.build_command,
      outputDirectory: project.output_directory,
      rootDirectory: project.root_directory,
    },
    cache: d.cache ? cacheLanes({ target: d.target, ref: d.branch }, project.branch) : null,
    target: d.target,
  };
}

/** Reads `deployments.build_spec`; a value that does not parse is an error naming the deployment. */
export function decodeBuildSpec(deploymentId: string, text: string | null): BuildSpec {
  if (text === null) throw new Error(`Deployment ${deploymentId} has no build spec`);
  return decodeJson(BuildSpec, text, `Deployment ${deploymentId}'s build spec`);
}

export const encodeBuildSpec = (spec: BuildSpec): string => JSON.stringify(BuildSpec.parse(spec));
