import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { collectFiles, LEFT_OUT_BY_DEFAULT } from '../../api/upload/collect-files.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'slipway-collect-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

it('collects what git would commit and .slipwayignore allows, hashed, in a stable order', async () => {
  const root = tree({
    '.gitignore': 'node_modules/\n*.log\n/dist\n!keep.log\n',
    '.slipwayignore': 'secrets.txt\n',
    'index.html': '<h1>hi</h1>',
    'app.log': 'noise',
    'keep.log': 'kept by negation',
    'dist/out.js': 'built',
    'src/dist/inside.js': 'not the root dist',
    'src/.gitignore': 'generated.js\n',
    'src/generated.js': 'ignored by the nested file',
    'src/main.js': 'main',
    'node_modules/x/index.js': 'dependency',
    'secrets.txt': 'not for the service',
    '.git/HEAD': 'ref: refs/heads/main',
    'bin/build.sh': '#!/bin/sh\n',
  });
  chmodSync(join(root, 'bin/build.sh'), 0o755);
  symlinkSync('/etc/passwd', join(root, 'passwd'));
  const skipped: string[] = [];
  const files = await collectFiles(root, {
    ignoreFiles: ['.gitignore', '.slipwayignore'],
    onSkip: (path, reason) => skipped.push(`${path}: ${reason}`),
  });
  expect(files.map((f) => f.path)).toEqual([
    '.gitignore',
    '.slipwayignore',
    'bin/build.sh',
    'index.html',
    'keep.log',
    'src/.gitignore',
    'src/dist/inside.js',
    'src/main.js',
  ]);
  expect(skipped).toEqual(['passwd: a symbolic link']);
  const index = files.find((f) => f.path === 'index.html')!;
  expect(index).toMatchObject({
    sha256: createHash('sha256').update('<h1>hi</h1>').digest('hex'),
    size: 11,
    mode: 0o644,
    absolute: join(root, 'index.html'),
  });
  expect(files.find((f) => f.path === 'bin/build.sh')!.mode).toBe(0o755);
  // Without ignore files (a prebuilt output), only .git and links are left out.
  const all = await collectFiles(root);
  expect(all.map((f) => f.path)).toContain('node_modules/x/index.js');
  expect(all.map((f) => f.path)).not.toContain('.git/HEAD');
});

it('leaves out what `leaveOut` names at any depth, telling how much; only the take-back file brings one back', async () => {
  const root = tree({
    'index.html': 'hi',
    '.env': 'A=1',
    '.env.local': 'B=2',
    '.env.example': 'A=',
    '.envrc': 'export C=3',
    'apps/web/.env.production.local': 'D=4',
    'apps/web/.env.production': 'E=5',
    'apps/web/.slipwayignore': '!.env.production\n',
    // A .gitignore negation is not the explicit choice: it stays out.
    '.gitignore': '!.env\n',
    'node_modules/a/index.js': 'x',
    'node_modules/a/lib/b.js': 'y',
    'node_modules/.bin/c': 'z',
  });
  const leftOut: string[] = [];
  const files = await collectFiles(root, {
    ignoreFiles: ['.gitignore', '.slipwayignore'],
    leaveOut: LEFT_OUT_BY_DEFAULT,
    takeBackFile: '.slipwayignore',
    onLeftOut: (path, isDir, n) => leftOut.push(`${path}${isDir ? ` ${n}` : ''}`),
  });
  expect(files.map((f) => f.path)).toEqual([
    '.env.example',
    '.gitignore',
    'apps/web/.env.production',
    'apps/web/.slipwayignore',
    'index.html',
  ]);
  expect(leftOut).toEqual([
    '.env',
    '.env.local',
    '.envrc',
    'apps/web/.env.production.local',
    'node_modules/ 3',
  ]);
});
