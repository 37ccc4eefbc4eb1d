import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The bundle the runner starts: action.yml's `runs.main`. */
export const BUNDLE = join(ROOT, 'dist', 'action', 'index.js');
const LOCK = join(tmpdir(), `slipway-action-bundle-${Buffer.from(ROOT).toString('hex').slice(-24)}.lock`);

function newestSource(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|json)$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  walk(join(ROOT, 'action'));
  walk(join(ROOT, 'api'));
  for (const f of ['package.json', 'package-lock.json'])
    newest = Math.max(newest, statSync(join(ROOT, f)).mtimeMs);
  return newest;
}

const fresh = () => existsSync(BUNDLE) && statSync(BUNDLE).mtimeMs >= newestSource();

/**
 * Builds dist/action with `npm run bundle` when it is missing or older than its sources, once
 * across test files running in parallel (a lock directory), and answers the bundle's path.
 */
export async function ensureBundle(): Promise<string> {
  for (;;) {
    if (fresh()) return BUNDLE;
    try {
      mkdirSync(LOCK);
    } catch {
      // Another file is building it; a lock left by a killed run is stale after three minutes.
      const lock = statSync(LOCK, { throwIfNoEntry: false });
      if (lock && Date.now() - lock.mtimeMs > 180_000) rmSync(LOCK, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    try {
      if (!fresh()) {
        await new Promise<void>((resolve, reject) =>
          execFile('npm', ['run', '--silent', 'bundle'], { cwd: ROOT }, (err, _out, stderr) =>
            err ? reject(new Error(`npm run bundle failed: ${stderr}`)) : resolve(),
          ),
        );
      }
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
}
