import { spawn } from 'node:child_process';

/** The command that opens a URL in the browser here: $BROWSER, else the platform's opener. */
export function opener(env: Record<string, string | undefined>, platform = process.platform): string[] {
  if (env.BROWSER) return [env.BROWSER];
  if (platform === 'darwin') return ['open'];
  if (platform === 'win32') return ['cmd', '/c', 'start', '""'];
  return ['xdg-open'];
}

/**
 * Starts `command url` on its own (a browser may outlive this process) and resolves once it has
 * started: true, or false when it cannot be run (not installed, not executable).
 */
export function openUrl(
  command: string[],
  url: string,
  env: Record<string, string | undefined>,
): Promise<boolean> {
  return new Promise((done) => {
    const [program, ...args] = command;
    const child = spawn(program!, [...args, url], { stdio: 'ignore', detached: true, env });
    child.once('error', () => done(false));
    child.once('spawn', () => {
      child.unref();
      done(true);
    });
  });
}
