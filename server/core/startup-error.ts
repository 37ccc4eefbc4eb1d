/** A start-up failure the operator can fix, said in one line (no stack). */
export class StartupError extends Error {
  override name = 'StartupError';
}

/**
 * A listen error in words: a port in use (EADDRINUSE) or not allowed (EACCES) names the port,
 * what wanted it and the variable that sets it. Other errors pass through unchanged.
 */
export function listenError(err: unknown, port: number, what: string, variable: string): Error {
  const code = (err as { code?: string }).code;
  if (code === 'EADDRINUSE') {
    return new StartupError(
      `Port ${port} (${what}) is already in use: stop what listens there, or set ${variable} to another port`,
    );
  }
  if (code === 'EACCES') {
    return new StartupError(
      `Port ${port} (${what}) may not be used by this user (ports below 1024 need privileges): set ${variable} to a port above 1023`,
    );
  }
  return err instanceof Error ? err : new Error(String(err));
}
