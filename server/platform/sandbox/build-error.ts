import type { SandboxLimit } from '../ops-metrics/ops-metrics.ts';

/**
 * A build that failed for a reason the user can act on. `message` is shown as the
 * deployment's `errorMessage` and in its build log, so it says what went wrong and what to do.
 */
export class BuildError extends Error {
  override name = 'BuildError';
  /** The sandbox limit that stopped the build, when one did (the operator's metrics count them). */
  readonly limit: SandboxLimit | undefined;

  constructor(message: string, opts: { limit?: SandboxLimit } = {}) {
    super(message);
    this.limit = opts.limit;
  }
}

/** A build phase ran out of time; the orchestrator words it as the build's time limit. */
export class BuildTimeoutError extends BuildError {
  override name = 'BuildTimeoutError';
}

/** The build was cancelled (shutdown or a newer deployment). */
export class BuildCancelledError extends BuildError {
  override name = 'BuildCancelledError';
}

/**
 * `message` with the service's own directories replaced by names a tenant may read (an error
 * from the file system names absolute paths: `lstat '/var/lib/slipway/workspaces/...'`). The
 * longest path is replaced first, so a workspace inside the data directory reads as the workspace.
 */
export function hideHostPaths(
  message: string,
  dirs: readonly (readonly [path: string, shownAs: string])[],
): string {
  let out = message;
  for (const [path, shownAs] of [...dirs].sort((a, b) => b[0].length - a[0].length)) {
    if (path.length > 1) out = out.split(path).join(shownAs);
  }
  return out;
}
