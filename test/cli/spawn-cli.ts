import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const BIN = resolve(import.meta.dirname, '../../bin/slipway.js');

export interface SpawnedRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real CLI (bin/slipway.js) as a child process in `cwd`, with the environment of the
 * test run minus anything that configures Slipway, plus `env`: what a user's shell runs.
 */
export function spawnCli(args: string[], cwd: string, env: Record<string, string>): Promise<SpawnedRun> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('SLIPWAY_') && !['PORT', 'HOST', 'DATABASE_URL', 'LOG_LEVEL'].includes(k),
    ),
  );
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    // Generous: the machine's two cores are shared with builds and the rest of the suite.
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}
