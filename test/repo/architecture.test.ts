import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { functionSizes } from '../../scripts/function-sizes.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A tree of its own with these files, checked by the project's rules (.dependency-cruiser.cjs). */
async function cruise(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-imports-'));
  temps.push(dir);
  const tsconfig = {
    compilerOptions: {
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      allowImportingTsExtensions: true,
      noEmit: true,
    },
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const bin = join(ROOT, 'node_modules/.bin/depcruise');
  const args = [...new Set(Object.keys(files).map((f) => f.split('/')[0]!))];
  return run(bin, [...args, '--config', join(ROOT, '.dependency-cruiser.cjs')], { cwd: dir }).then(
    (r) => ({ code: 0, out: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
  );
}

describe('the direction of imports (docs/architecture.md)', () => {
  it('`npm run lint:imports` passes on this tree', async () => {
    const { stdout } = await run('npm', ['run', 'lint:imports'], { cwd: ROOT });
    expect(stdout).toMatch(/no dependency violations found \(\d+ modules/);
  }, 120_000);

  it('refuses an import from a lower floor of server/ to a higher one, naming both files', async () => {
    const r = await cruise({
      'server/services/b.ts': 'export const b = 1;\n',
      'server/lib/a.ts': "import { b } from '../services/b.ts';\nexport const a = b;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('server-floor-0: server/lib/a.ts → server/services/b.ts');
  }, 60_000);

  it('refuses an import circle, type-only imports included', async () => {
    const r = await cruise({
      'server/lib/a.ts': "import type { B } from './b.ts';\nexport type A = B | 1;\n",
      'server/lib/b.ts': "import type { A } from './a.ts';\nexport type B = A | 2;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('no-circular');
  }, 60_000);

  it('refuses api/ importing the service, and the bot or the Action importing anything but api/', async () => {
    const r = await cruise({
      'server/lib/x.ts': 'export const x = 1;\n',
      'api/a.ts': "import { x } from '../server/lib/x.ts';\nexport const a = x;\n",
      'bot/b.ts': "import { x } from '../server/lib/x.ts';\nexport const b = x;\n",
      'action/c.ts': "import { b } from '../bot/b.ts';\nexport const c = b;\n",
    });
    expect(r.code).toBe(3);
    expect(r.out).toContain('api-depends-on-nothing: api/a.ts → server/lib/x.ts');
    expect(r.out).toContain('action-and-bot-only-on-api: bot/b.ts → server/lib/x.ts');
    expect(r.out).toContain('action-and-bot-only-on-api: action/c.ts → bot/b.ts');
  }, 60_000);

  it('refuses a file of server/ that stands on no floor', async () => {
    const r = await cruise({
      'server/lib/x.ts': 'export const x = 1;\n',
      'server/somewhere/y.ts': "import { x } from '../lib/x.ts';\nexport const y = x;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('server-files-on-a-floor: server/somewhere/y.ts');
  }, 60_000);
});

describe('scripts/function-sizes.ts', () => {
  it('lists the longest functions, longest first, as the docs run it', async () => {
    const { stdout } = await run('node', ['--import', 'tsx', 'scripts/function-sizes.ts', 'server', '10'], {
      cwd: ROOT,
    });
    const rows = stdout.trim().split('\n');
    expect(rows).toHaveLength(10);
    const lines = rows.map((r) => Number(/^\s*(\d+)\s+server\/\S+\.ts\s+\S+/.exec(r)?.[1]));
    expect(lines.every((n) => n > 0)).toBe(true);
    expect([...lines].sort((a, b) => b - a)).toEqual(lines);
  }, 60_000);

  it('counts a function from its first line to its last', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-sizes-'));
    temps.push(dir);
    writeFileSync(join(dir, 'a.ts'), 'export function three() {\n  return 1;\n}\nconst one = () => 2;\n');
    const sizes = functionSizes(dir).map((f) => [f.name, f.lines]);
    expect(sizes).toEqual([
      ['three', 3],
      ['one', 1],
    ]);
  });
});
