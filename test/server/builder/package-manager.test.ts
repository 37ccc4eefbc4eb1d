import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readPackageJson } from '../../../server/features/builds/package-json.ts';
import { detectPackageManager } from '../../../server/features/builds/package-manager.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

async function detect(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-pm-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content);
  return detectPackageManager(dir, await readPackageJson(dir));
}

const withDeps = JSON.stringify({ dependencies: { react: '^18.0.0' } });

describe('detectPackageManager', () => {
  it.each([
    ['package-lock.json', 'npm', ['npm', 'ci']],
    ['npm-shrinkwrap.json', 'npm', ['npm', 'ci']],
    ['yarn.lock', 'yarn', ['yarn', 'install', '--frozen-lockfile']],
    ['pnpm-lock.yaml', 'pnpm', ['pnpm', 'install', '--frozen-lockfile']],
    ['bun.lockb', 'bun', ['bun', 'install', '--frozen-lockfile']],
    ['bun.lock', 'bun', ['bun', 'install', '--frozen-lockfile']],
  ])('%s -> %s', async (lockfile, name, install) => {
    const pm = await detect({ 'package.json': withDeps, [lockfile]: '' });
    expect(pm).toMatchObject({ name, lockfile, install });
    expect(pm.runScript('build')).toEqual([name, 'run', 'build']);
  });

  it('installs Yarn 2 and later with --immutable', async () => {
    const declared = await detect({
      'package.json': JSON.stringify({ packageManager: 'yarn@4.5.0', dependencies: { react: '18' } }),
      'yarn.lock': '',
    });
    expect(declared.install).toEqual(['yarn', 'install', '--immutable']);
    const configured = await detect({ 'package.json': withDeps, 'yarn.lock': '', '.yarnrc.yml': '' });
    expect(configured.install).toEqual(['yarn', 'install', '--immutable']);
  });

  it('a workspace root without dependencies of its own still installs frozen to its lockfile', async () => {
    const root = await detect({
      'package.json': JSON.stringify({ workspaces: ['apps/*'] }),
      'package-lock.json': '{}',
    });
    expect(root).toMatchObject({ install: null, installAll: ['npm', 'ci'] });
    const pnpm = await detect({ 'package.json': '{}', 'pnpm-lock.yaml': '' });
    expect(pnpm.installAll).toEqual(['pnpm', 'install', '--frozen-lockfile']);
  });

  it('installs with npm install when there is no lockfile', async () => {
    expect(await detect({ 'package.json': withDeps })).toMatchObject({
      name: 'npm',
      lockfile: null,
      install: ['npm', 'install'],
    });
  });

  it("follows package.json's packageManager field when there is no lockfile", async () => {
    const pm = await detect({
      'package.json': JSON.stringify({ packageManager: 'pnpm@9.1.0', devDependencies: { vite: '5' } }),
    });
    expect(pm).toMatchObject({ name: 'pnpm', install: ['pnpm', 'install'] });
  });

  it('installs nothing without dependencies or without package.json', async () => {
    expect(
      (await detect({ 'package.json': JSON.stringify({ scripts: { build: 'node b.mjs' } }) })).install,
    ).toBeNull();
    expect(
      (await detect({ 'package.json': JSON.stringify({ dependencies: {} }), 'package-lock.json': '{}' }))
        .install,
    ).toBeNull();
    expect((await detect({ 'index.html': 'x' })).install).toBeNull();
  });
});
