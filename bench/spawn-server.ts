import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Runs a bench server script in its own process and waits for the JSON line it prints. */
export async function spawnBenchServer<T>(
  script: string,
  env: Record<string, string> = {},
  /** How long its stop may take before it is killed (a server with builds running winds them down). */
  stopMs = 5000,
) {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return {
    info: JSON.parse(line) as T,
    /** The server's process id (its CPU time: `processCpuUs`). */
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), stopMs).unref();
      }),
  };
}
