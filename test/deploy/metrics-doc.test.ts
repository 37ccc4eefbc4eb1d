import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mountsUnder } from '../helpers/mounts.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** The first sh block after `marker` in docs/operating.md. */
function block(marker: string): string {
  const doc = readFileSync(join(ROOT, 'docs/operating.md'), 'utf8');
  const at = doc.indexOf(marker);
  expect(at, marker).toBeGreaterThan(-1);
  const start = doc.indexOf('```sh\n', at) + '```sh\n'.length;
  return doc.slice(start, doc.indexOf('\n```', start));
}

/**
 * docs/operating.md's Prometheus example, run as written (in a data directory of its own, with
 * the API and edge on free ports); then its server is stopped.
 */
describe("docs/operating.md's metrics example", () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-metrics-doc-'));
  // The sandbox's user passes through it to the data directory.
  chmodSync(dir, 0o755);
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(ROOT, 'metrics.txt'), { force: true });
  });

  it('starts the service with metrics on and reads them with the token', { timeout: 120_000 }, async () => {
    const script = block('## Prometheus metrics');
    expect(script).toMatch(/npx slipway serve &/);
    // In a process group of its own: the server it starts in the background is stopped with it.
    const child = spawn('bash', ['-c', script], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        npm_config_update_notifier: 'false',
        SLIPWAY_DATA_DIR: join(dir, 'data'),
        HOST: '127.0.0.1',
        PORT: '0',
        SLIPWAY_EDGE_PORT: '0',
        LOG_LEVEL: 'warn',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    // The script is done; its background server is not: stop the group, wait for its output to end.
    const closed = new Promise((done) => child.once('close', done));
    process.kill(-child.pid!, 'SIGTERM');
    await closed;
    // Stopped as it started (the metrics answer first): it finished starting, then stopped cleanly.
    expect(await mountsUnder(dir)).toEqual([]);
    const r = { code, stdout, stderr };
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^slipway_info\{version="[\d.]+",roles="api,worker,edge",database="sqlite"\} 1$/m,
    );
    expect(r.stdout).toMatch(/^slipway_edge_requests_total\{class="2xx"\} 0$/m);
    expect(existsSync(join(ROOT, 'metrics.txt'))).toBe(true);
  });
});
