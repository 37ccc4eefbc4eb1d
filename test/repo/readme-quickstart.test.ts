import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The first ```sh block after `marker` in the README. */
function block(marker: string): string {
  const from = README.indexOf(marker);
  expect(from, marker).toBeGreaterThan(-1);
  const start = README.indexOf('```sh\n', from) + '```sh\n'.length;
  return README.slice(start, README.indexOf('\n```', start));
}

/**
 * The README's quick start, run as a newcomer would, twice, against the whole service on
 * 127.0.0.1 (its addresses and /tmp put where this test has them): the second run must work
 * too, and an error must show in words.
 */
describe('the README quick start', () => {
  let s: Stack;
  let dir: string;
  const KEY = Buffer.alloc(32, 9).toString('base64');

  beforeAll(async () => {
    s = await startStack({ env: { SLIPWAY_ENCRYPTION_KEY: KEY } });
    dir = mkdtempSync(join(tmpdir(), 'slipway-readme-'));
    // Builds run as another user in the sandbox: the repository must be readable to them, as /tmp/hello is.
    chmodSync(dir, 0o755);
  });
  afterAll(async () => {
    await s?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const adapt = (script: string) =>
    script
      .replaceAll('http://localhost:3000', s.apiUrl)
      .replaceAll('localhost:3001', `localhost:${s.edgePort}`)
      .replaceAll('/tmp/hello', join(dir, 'hello'))
      .replaceAll('/tmp/site', join(dir, 'site'));

  function run(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((done, fail) => {
      const child = spawn('bash', ['-c', `shopt -s expand_aliases\n${script}`], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          HOME: join(dir, 'home'),
          SLIPWAY_DATA_DIR: s.dataDir,
          SLIPWAY_ENCRYPTION_KEY: KEY,
          LOG_LEVEL: 'warn',
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', fail);
      child.on('close', (code) => done({ code, stdout, stderr }));
    });
  }

  it('deploys, and deploys again when run a second time', { timeout: 120_000 }, async () => {
    const script = adapt(block('Deploy something, from another terminal'));
    for (const time of ['first', 'second']) {
      const r = await run(script);
      expect(r.stderr, `${time} run`).not.toMatch(/TypeError|at .*\.js:\d+/);
      expect(r.stdout, `${time} run: ${r.stderr}`).toContain('==> Live at');
      expect(r.stdout.trimEnd().endsWith('<h1>Hello from Slipway</h1>'), `${time} run: ${r.stdout}`).toBe(
        true,
      );
    }
  });

  it('deploys a folder with the command line afterwards', { timeout: 120_000 }, async () => {
    const script = adapt(
      `${block('Deploy something, from another terminal').split('\n')[0]}\n${block('Or deploy a folder')}`,
    );
    const r = await run(script);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^http:\/\/site\.localhost:\d+$/);
    expect(r.stderr).toMatch(/Created project site \(prj_\w+\) in you, and linked \S+\/site to it\./);
  });

  it('shows the API’s refusal in words when a step fails', async () => {
    const script = adapt(block('Deploy something, from another terminal')).replace(
      /^PROJECT=.*$/m,
      'PROJECT=prj_doesnotexist',
    );
    const r = await run(script);
    expect(r.stderr).toContain('Project prj_doesnotexist not found');
    expect(r.stderr).not.toMatch(/TypeError/);
  });
});
