import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
      'server/platform/http/b.ts': 'export const b = 1;\n',
      'server/core/a.ts': "import { b } from '../platform/http/b.ts';\nexport const a = b;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('server-floor-0: server/core/a.ts → server/platform/http/b.ts');
  }, 60_000);

  it('refuses an import circle, type-only imports included', async () => {
    const r = await cruise({
      'server/core/a.ts': "import type { B } from './b.ts';\nexport type A = B | 1;\n",
      'server/core/b.ts': "import type { A } from './a.ts';\nexport type B = A | 2;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('no-circular');
  }, 60_000);

  it('refuses api/ importing the service, and the bot or the Action importing anything but api/', async () => {
    const r = await cruise({
      'server/core/x.ts': 'export const x = 1;\n',
      'api/a.ts': "import { x } from '../server/core/x.ts';\nexport const a = x;\n",
      'bot/b.ts': "import { x } from '../server/core/x.ts';\nexport const b = x;\n",
      'action/c.ts': "import { b } from '../bot/b.ts';\nexport const c = b;\n",
    });
    expect(r.code).toBe(3);
    expect(r.out).toContain('api-depends-on-nothing: api/a.ts → server/core/x.ts');
    expect(r.out).toContain('action-and-bot-only-on-api: bot/b.ts → server/core/x.ts');
    expect(r.out).toContain('action-and-bot-only-on-api: action/c.ts → bot/b.ts');
  }, 60_000);

  it('refuses a file of server/ that stands on no floor', async () => {
    const r = await cruise({
      'server/core/x.ts': 'export const x = 1;\n',
      'server/somewhere/y.ts': "import { x } from '../core/x.ts';\nexport const y = x;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('server-files-on-a-floor: server/somewhere/y.ts');
  }, 60_000);
});

describe('features (docs/architecture.md#features)', () => {
  const entry = "export { x } from './x.ts';\n";
  const x = 'export const x = 1;\n';

  it("refuses a feature reaching past another feature's public entry, and a feature importing one above it", async () => {
    const r = await cruise({
      'server/features/identity/index.ts': entry,
      'server/features/identity/x.ts': x,
      'server/features/billing/index.ts': entry,
      'server/features/billing/x.ts': x,
      'server/features/builds/y.ts': "import { x } from '../identity/x.ts';\nexport const y = x;\n",
      'server/features/identity/z.ts': "import { x } from '../billing/index.ts';\nexport const z = x;\n",
    });
    expect(r.code).toBe(2);
    expect(r.out).toContain(
      'features-through-their-entry: server/features/builds/y.ts → server/features/identity/x.ts',
    );
    expect(r.out).toContain(
      'feature-identity: server/features/identity/z.ts → server/features/billing/index.ts',
    );
  }, 60_000);

  it('lets a feature use a lower one through its entry, and refuses the wiring reaching inside', async () => {
    const r = await cruise({
      'server/features/identity/index.ts': entry,
      'server/features/identity/x.ts': x,
      'server/features/billing/y.ts': "import { x } from '../identity/index.ts';\nexport const y = x;\n",
      'server/routes/r.ts': "import { x } from '../features/identity/x.ts';\nexport const r = x;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'wiring-through-feature-entries: server/routes/r.ts → server/features/identity/x.ts',
    );
    expect(r.out).not.toContain('server/features/billing/y.ts');
  }, 60_000);

  it("lets the roles use a feature's roles.ts, and refuses the API loading one through any file", async () => {
    const r = await cruise({
      'server/features/identity/roles.ts': entry,
      'server/features/identity/x.ts': x,
      'server/roles/w.ts': "import { x } from '../features/identity/roles.ts';\nexport const w = x;\n",
      'server/routes/r.ts': "import { x } from '../features/identity/roles.ts';\nexport const r = x;\n",
      'server/app.ts': "import { r } from './routes/r.ts';\nexport const app = r;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'api-without-the-roles-entries: server/app.ts → server/features/identity/roles.ts',
    );
    expect(r.out).not.toContain('server/roles/w.ts');
  }, 60_000);

  it('refuses a feature folder that is not on the list', async () => {
    const r = await cruise({
      'server/core/x.ts': x,
      'server/features/extras/a.ts': "import { x } from '../../core/x.ts';\nexport const a = x;\n",
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('features-on-the-list: server/features/extras/a.ts');
  }, 60_000);
});

describe("docs/architecture.md's load measurements", () => {
  it('run as written: each `node --import tsx -e "await import(...)"` loads its module and exits 0', async () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8').replace(/\s+/g, ' ');
    const commands = [...doc.matchAll(/`(node --import tsx -e "await import\('[^']+'\)")`/g)].map(
      (m) => m[1]!,
    );
    expect(commands).toEqual([
      `node --import tsx -e "await import('./server/main.ts')"`,
      `node --import tsx -e "await import('./test/helpers/app.ts')"`,
    ]);
    for (const command of commands) {
      const { stdout, stderr } = await run('sh', ['-c', command], { cwd: ROOT });
      expect({ command, stdout, stderr }).toEqual({ command, stdout: '', stderr: '' });
    }
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
