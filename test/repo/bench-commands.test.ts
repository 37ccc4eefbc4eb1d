import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The benches the docs tell readers to run (`npm run bench -- edge`, `npm run bench neighbours`)
 * are long, so no test runs them; a name the docs misspell would send readers to an error. Every
 * documented name must be one of its suites, and a name that is not one is refused with the list.
 */
const root = join(import.meta.dirname, '..', '..');

function suiteNames(): Set<string> {
  const source = readFileSync(join(root, 'bench', 'run.ts'), 'utf8');
  const table = source.slice(
    source.indexOf('const suites'),
    source.indexOf('};', source.indexOf('const suites')),
  );
  return new Set([...table.matchAll(/^\s+'?([a-z][a-z-]*)'?: \(\) =>/gm)].map((m) => m[1]!));
}

function documentedNames(): Array<{ file: string; name: string }> {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const found: Array<{ file: string; name: string }> = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(/npm run bench(?: --)?((?: [a-z][a-z-]*)+)/g)) {
      for (const name of m[1]!.trim().split(' ')) found.push({ file, name });
    }
  }
  return found;
}

describe('the benches the docs name', () => {
  it('are each a suite of bench/run.ts', () => {
    const suites = suiteNames();
    expect(suites.has('edge')).toBe(true);
    expect(suites.has('protection')).toBe(true);
    const documented = documentedNames();
    expect(documented.length).toBeGreaterThan(10);
    expect(documented.filter((d) => !suites.has(d.name))).toEqual([]);
  });

  it('a name that is not a suite is refused with the list of names, and nothing runs', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'next'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^npm run bench: no benchmark named "next"; the names: api, builds, edge, /);
    expect(run.stderr).toContain(' next-ssr, next-rebuild, ');
  }, 60_000);
});
