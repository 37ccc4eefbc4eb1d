import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatorEnv, STARTERS } from '../helpers/starters.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { FRAMEWORK_ENV } from './deploy-starter.ts';
import { runShell } from '../helpers/process.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const GUIDE = readFileSync(join(ROOT, 'docs/nextjs.md'), 'utf8');

/** The first ```<lang> block after `marker` in the guide. */
function block(marker: string, lang = 'sh'): string {
  const from = GUIDE.indexOf(marker);
  expect(from, marker).toBeGreaterThan(-1);
  const start = GUIDE.indexOf(`\`\`\`${lang}\n`, from) + `\`\`\`${lang}\n`.length;
  return GUIDE.slice(start, GUIDE.indexOf('\n```', start));
}

const sh = (script: string, cwd: string, env: NodeJS.ProcessEnv) => runShell(`set -e\n${script}`, cwd, env);

/**
 * docs/nextjs.md, run as a reader would: the starter made by the guide's own command, the guide's
 * commands with `slipway` on the PATH and logged in, against the whole service. Two things differ
 * from a reader's machine, each said where it happens: the offline edit of next/font/google
 * (this machine has no internet), and the deployment id and addresses the service printed.
 */
describe('the Next.js guide, step by step', { timeout: 600_000 }, () => {
  let s: Stack;
  let work: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    s = await startStack({ env: FRAMEWORK_ENV });
    work = mkdtempSync(join(tmpdir(), 'slipway-nextjs-guide-'));
    const bin = join(work, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'slipway'),
      `#!/bin/sh\nexec "${process.execPath}" "${ROOT}/bin/slipway.js" "$@"\n`,
    );
    chmodSync(join(bin, 'slipway'), 0o755);
    const { token } = await s.user('guide@example.com');
    env = {
      ...generatorEnv(join(work, 'home')),
      PATH: `${bin}:${process.env.PATH}`,
      // Logged in, as the guide assumes (docs/cli.md: these two are the login of scripts and CI).
      SLIPWAY_API_URL: s.apiUrl,
      SLIPWAY_TOKEN: token,
    };
  });
  afterAll(async () => {
    await s?.stop();
    rmSync(work, { recursive: true, force: true });
    // The stop gives a job still running (the build cache's save after live, 650 MiB) its grace and
    // stops the app; then a Next.js tree is deleted: more than the default 30 s on a loaded machine.
  }, 240_000);

  it('makes the app, deploys a preview and promotes it, with the log the guide shows', async () => {
    const [create, cd] = block('## 1. The app').split('\n');
    const made = await sh(create!, work, env);
    expect(made.code, made.stderr.slice(-3000)).toBe(0);
    expect(cd).toBe('cd web');
    const app = join(work, 'web');
    expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).dependencies.next).toBe('16.4.3');

    // Offline only: this machine cannot reach fonts.googleapis.com (the guide says what a reader does).
    for (const edit of STARTERS.next.offlineEdits) {
      const path = join(app, edit.file);
      const text = readFileSync(path, 'utf8');
      expect(text, edit.file).toContain(edit.find);
      writeFileSync(path, text.replace(edit.find, edit.replace));
    }
    chmodSync(work, 0o755);

    const deployed = await sh(block('## 2. A project, and a preview'), app, env);
    expect(deployed.code, deployed.stderr.slice(-4000)).toBe(0);
    const previewUrl = deployed.stdout.trim().split('\n').at(-1)!;
    expect(previewUrl).toMatch(/^http:\/\/web-[a-z0-9]+\.localhost:\d+$/);
    // The build log as the guide shows it, line by line (the address is this run's).
    const shown = block('## 2. A project, and a preview', 'text')
      .split('\n')
      .filter((line) => line !== '...' && !line.startsWith('==> Live at'));
    for (const line of shown) expect(deployed.stderr, line).toContain(line);
    expect(deployed.stderr).toContain(`==> Live at ${previewUrl}`);
    const preview = await s.fetchFromEdge(previewUrl);
    expect(preview.status).toBe(200);
    expect(await preview.text()).toContain('To get started, edit the');

    const id = /Deploying web \(preview\): (dpl_\w+)/.exec(deployed.stderr)?.[1];
    expect(id, deployed.stderr).toBeDefined();
    const [promote] = block('## 3. Production').split('\n');
    const promoted = await sh(promote!.replace(/dpl_\w+/, id!), app, env);
    expect(promoted.code, promoted.stderr).toBe(0);
    const production = await s.fetchFromEdge(`http://web.localhost:${s.edgePort}/`);
    expect(production.status).toBe(200);
    expect(await production.text()).toContain('To get started, edit the');
  });
});
