import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allContracts, contracts, pathOf } from '../../api/routes/index.ts';
import { DOCS_SCRIPT } from '../../server/platform/http/docs-page.ts';
import { allRoutes } from '../../server/routes/index.ts';

const root = join(import.meta.dirname, '../..');
/** The fields of a route that are its wire contract (api/routes/contract.ts), not server behaviour. */
const WIRE = [
  'method',
  'url',
  'tag',
  'summary',
  'auth',
  'body',
  'query',
  'params',
  'response',
  'responseKind',
  'successStatus',
  'deprecated',
  'rawBody',
  'anyBody',
] as const;

describe('the route contract (api/routes)', () => {
  it('every entry is served by exactly one server route, which adds no wire field of its own', () => {
    const routes = allRoutes();
    const entries = allContracts();
    expect(entries.length).toBeGreaterThanOrEqual(5);
    for (const entry of entries) {
      const served = routes.filter((r) => r.method === entry.method && r.url === entry.url);
      expect(served, `${entry.method} ${entry.url}`).toHaveLength(1);
      for (const field of WIRE) {
        // The very same schema objects, not look-alikes.
        expect(served[0]![field], `${entry.method} ${entry.url} ${field}`).toBe(entry[field]);
      }
    }
  });

  it('every server route is a contract entry, and no two entries share a method and URL', () => {
    const keys = allContracts().map((e) => `${e.method} ${e.url}`);
    expect(new Set(keys).size).toBe(keys.length);
    const served = allRoutes().map((r) => `${r.method} ${r.url}`);
    expect(served.sort()).toEqual([...keys].sort());
    expect(keys.length).toBe(71);
  });

  it("the reference's script route is the file the server reads", () => {
    expect(contracts.system.docsScript.url).toBe(`/docs/${DOCS_SCRIPT}`);
  });

  it('the client writes no URL: api/client has no "/v1/" string literal', () => {
    const dir = join(root, 'api/client');
    const found: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const code = readFileSync(join(dir, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const m of code.matchAll(/['"`]\/v1\//g))
        found.push(`${file}: ${code.slice(m.index, m.index + 40)}`);
    }
    expect(found).toEqual([]);
  });

  it('builds a path from the template, percent-encoding each segment', () => {
    expect(pathOf(contracts.projects.get, { projectId: 'prj_1' })).toBe('/v1/projects/prj_1');
    expect(pathOf(contracts.projects.get, { projectId: 'a/b c?' })).toBe('/v1/projects/a%2Fb%20c%3F');
    expect(() => pathOf(contracts.projects.get, {} as { projectId: string })).toThrow(/:projectId/);
  });
});
