import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, utimesSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const ENTRY = join(ROOT, 'dist/cli/main.js');
const node = (...args: string[]) => execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
const isFresh = () =>
  node('--input-type=module', '-e', "console.log((await import('./bin/cli-bundle.js')).isFresh())").trim();

/** dist/cli, the CLI compiled ahead of time (bin/cli-bundle.js): what it holds, and when it is rebuilt. */
describe('the compiled CLI', () => {
  it('holds the CLI and the API client, never the server, and lists what it was built from', () => {
    expect(node('bin/slipway.js', '--version')).toMatch(/^slipway \d+\.\d+\.\d+\n$/);
    const inputs = JSON.parse(readFileSync(join(ROOT, 'dist/cli/inputs.json'), 'utf8')) as string[];
    expect(inputs).toEqual(
      expect.arrayContaining(['bin/cli-bundle.js', 'package.json', 'cli/entry.ts', 'cli/run/deploy.ts']),
    );
    expect(inputs.filter((i) => i.startsWith('server/'))).toEqual([]);
    // --help loads the entry and the commands' list, not the client (zod and the schemas).
    const main = readFileSync(ENTRY, 'utf8');
    const chunks = [...main.matchAll(/from"\.\/(chunk-[A-Z0-9]+\.js)"/g)].map((m) => m[1]!);
    const loaded = [main, ...chunks.map((c) => readFileSync(join(ROOT, 'dist/cli', c), 'utf8'))];
    expect(loaded.join('').length).toBeLessThan(64 * 1024);
  });

  it('is rebuilt by the next command when a file it was built from is newer', () => {
    node('bin/slipway.js', '--version');
    expect(isFresh()).toBe('true');
    const long = new Date(Date.now() - 24 * 3600_000);
    utimesSync(ENTRY, long, long);
    expect(isFresh()).toBe('false');
    expect(node('bin/slipway.js', '--version')).toMatch(/^slipway /);
    expect(statSync(ENTRY).mtimeMs).toBeGreaterThan(long.getTime() + 3600_000);
    expect(isFresh()).toBe('true');
  });
});
