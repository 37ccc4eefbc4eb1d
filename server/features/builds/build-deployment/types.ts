import type { Sandbox } from '../../../platform/sandbox/index.ts';
import type { ArtifactStore } from '../artifacts.ts';
import type { BuildCacheOptions } from '../build-cache.ts';
import type { BuildSettings } from '../../../platform/store/build-spec.ts';
import type { OutputBudget } from '../run-command.ts';
import type { PackagedOutput } from '../stages/package-output.ts';

export type BuildLogType = 'build' | 'error';

export interface BuildDeploymentOptions {
  repositoryUrl: string;
  /**
   * Build these files instead of a checkout: `write(dir)` puts them in the (empty) source
   * directory and returns what it made, which the sandbox's user is then given.
   * `repositoryUrl`, `ref` and `commit` are not used.
   */
  files?: { count: number; write(dir: string): Promise<string[]> };
  /** What to advise when the repository cannot be read; default: check the URL and that it is public. */
  unreachableHint?: string;
  /** Branch name or full ref (`refs/pull/12/head`). */
  ref: string;
  /** Pinned commit (7 to 40 hex characters); default the head of `ref`. */
  commit?: string | null;
  /** The project's framework slug; detected from the repository when null. */
  framework?: string | null;
  /** The project's build settings; each null is detected. */
  settings?: BuildSettings;
  /** The framework the project's previous build was built as, to say when detection changed. */
  previousFramework?: { slug: string; deploymentId: string } | null;
  /** The project's environment variables for this target, decrypted. */
  env: Record<string, string>;
  /** Values masked as `***` in the log (the `encrypted` variables). */
  secrets: string[];
  /** A fresh directory is made (and always removed) under this one for each build. */
  workspaceRoot: string;
  artifacts: ArtifactStore;
  /** For the whole build: checkout, install and build (SLIPWAY_BUILD_TIMEOUT). */
  timeoutMs: number;
  maxOutputBytes: number;
  /** Default 100,000 files. */
  maxOutputFiles?: number;
  /** Every log line. The reason for a failure is logged as an `error` line before it is thrown. */
  log: (type: BuildLogType, line: string) => void;
  /** Bounds and paces the install's and the build's output before it becomes lines (the build log's limit). */
  logBudget?: OutputBudget;
  /** Aborting kills the running command and fails the build with BuildCancelledError. */
  signal?: AbortSignal;
  /** PATH the commands run with (node, npm, git); default the server's. */
  path?: string;
  /** Every command of the build (git, install, build) runs in it. */
  sandbox: Sandbox;
  /** The project's build cache; `'off'` when the deployment asked for none; absent: no cache. */
  cache?: BuildCacheOptions | 'off';
  /**
   * Leave saving the cache to the caller (`saveCache` in the result, which then also removes
   * the workspace), so the deployment can go live first.
   */
  deferCacheSave?: boolean;
  /** Told the commit as soon as it is checked out (before install and build). */
  onCheckedOut?(commit: {
    commitHash: string | null;
    commitMessage: string | null;
    author: string | null;
  }): Promise<void>;
}

export interface BuildResult extends PackagedOutput {
  /** The checked-out commit; null for uploaded files. */
  commitHash: string | null;
  commitMessage: string | null;
  /** Commit author's e-mail. */
  author: string | null;
  /** Framework slug: the project's, or the detected one (store it on the project when it had none). */
  framework: string;
  /** Whether `framework` was detected (true) or the project's own setting (false). */
  frameworkDetected: boolean;
  durationMs: number;
  /** With `deferCacheSave`: saves the build cache, then removes the workspace. Never throws. */
  saveCache?: () => Promise<void>;
}
