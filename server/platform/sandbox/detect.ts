import { accessSync, constants } from 'node:fs';
import { spawnPlanned } from './spawn-planned.ts';
import { planSpawn, type SandboxTools, type SpawnSettings } from './spawn.ts';

const SEARCH = ['/usr/bin', '/usr/sbin', '/bin', '/sbin', '/usr/local/bin', '/usr/local/sbin'];

const PACKAGES: Record<keyof SandboxTools, string> = {
  bwrap: 'bubblewrap',
  pasta: 'passt',
  nft: 'nftables',
  prlimit: 'util-linux',
  setpriv: 'util-linux',
  bash: 'bash',
};

/** The absolute path of the program `name` in the system's directories, or null. */
export function findProgram(name: string): string | null {
  for (const dir of SEARCH) {
    try {
      accessSync(`${dir}/${name}`, constants.X_OK);
      return `${dir}/${name}`;
    } catch {
      // Next.
    }
  }
  return null;
}

/** The sandbox's programs, or the Debian packages that are missing. */
export function findTools(): { tools: SandboxTools } | { missing: string[] } {
  const found: Partial<SandboxTools> = {};
  const missing = new Set<string>();
  for (const key of Object.keys(PACKAGES) as (keyof SandboxTools)[]) {
    const path = findProgram(key);
    if (path) found[key] = path;
    else missing.add(`${key} (Debian package ${PACKAGES[key]})`);
  }
  return missing.size ? { missing: [...missing] } : { tools: found as SandboxTools };
}

/**
 * Runs `true` in a real sandbox with `dir` bound read-write: what fails here (no user namespaces,
 * /dev/net/tun not usable by the sandbox user, a data directory the sandbox user cannot traverse)
 * would fail every build. Resolves to null when it works, else to what went wrong.
 */
export function trySandbox(settings: SpawnSettings, dir: string, timeoutMs = 10_000): Promise<string | null> {
  const plan = planSpawn(settings, {
    argv: ['/bin/sh', '-c', 'test -w .'],
    cwd: dir,
    env: {},
    writable: [dir],
    readOnly: [],
  });
  return new Promise((resolve) => {
    let child;
    try {
      child = spawnPlanned(plan);
    } catch (err) {
      resolve((err as Error).message);
      return;
    }
    let output = '';
    const collect = (chunk: Buffer) => {
      if (output.length < 4000) output += chunk.toString();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve(err.message);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve(null);
      const lines = output
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !/syslog/.test(l));
      resolve(lines.slice(-3).join(' / ') || `the test sandbox ended with ${signal ?? `code ${code}`}`);
    });
  });
}
