/**
 * A build that failed for a reason the user can act on. `message` is shown as the
 * deployment's `errorMessage` and in its build log, so it says what went wrong and what to do.
 */
export class BuildError extends Error {
  override name = 'BuildError';
}

/** A build phase ran out of time; the orchestrator words it as the build's time limit. */
export class BuildTimeoutError extends BuildError {
  override name = 'BuildTimeoutError';
}

/** The build was cancelled (shutdown or a newer deployment). */
export class BuildCancelledError extends BuildError {
  override name = 'BuildCancelledError';
}
