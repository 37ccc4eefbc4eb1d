import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The environment variables a schema reads: its keys (`  NAME: z...`). */
const variablesOf = (path: string) =>
  [...read(path).matchAll(/^\s{2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);

describe('configuration', () => {
  it('every variable the service and the GitHub App read is in the README’s tables', () => {
    const variables = [
      ...new Set([...variablesOf('server/platform/config/env-schema.ts'), ...variablesOf('bot/settings.ts')]),
    ];
    expect(variables).toEqual(
      expect.arrayContaining(['PORT', 'SLIPWAY_DATA_DIR', 'APP_ID', 'BOT_PORT', 'SLIPWAY_EDGE_TLS_PORT']),
    );
    const readme = read('README.md');
    const missing = variables.filter((v) => !new RegExp(`^\\|[^\\n]*\`${v}\``, 'm').test(readme));
    expect(missing).toEqual([]);
  });

  it('the README’s tables name no variable that nothing reads', () => {
    const read_ = new Set([
      ...variablesOf('server/platform/config/env-schema.ts'),
      ...variablesOf('bot/settings.ts'),
    ]);
    // Read by the people's CLI (docs/cli.md), not by the service.
    const elsewhere = ['SLIPWAY_TOKEN', 'SLIPWAY_CONFIG_DIR'];
    const named = [...read('README.md').matchAll(/^\|\s*((?:`[A-Z][A-Z0-9_]+`(?:,\s*)?)+)\s*\|/gm)].flatMap(
      (m) => [...m[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((x) => x[1]!),
    );
    expect(named.length).toBeGreaterThan(40);
    expect(named.filter((v) => !read_.has(v) && !elsewhere.includes(v))).toEqual([]);
  });
});
