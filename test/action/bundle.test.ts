import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE, ensureBundle } from './bundle.ts';

/** What webpack's chunk loader in index.js reads from each chunk it imports. */
interface Chunk {
  id: number;
  ids: number[];
  modules: Record<string, unknown>;
}

/**
 * The chunks the bundle loads after its start (@actions/core once the first request is sent,
 * GitHub's client when a GitHub call is due): ncc minifies index.js only, `npm run bundle`
 * minifies these (action/minify-chunks.ts). The runs of the bundle in the other files show
 * that they load and work; this shows that they are minified and still export what the loader
 * reads.
 */
describe('the bundle: chunks loaded after start', () => {
  let chunks: string[];

  beforeAll(async () => {
    await ensureBundle();
    const dir = dirname(BUNDLE);
    chunks = readdirSync(dir)
      .filter((f) => /^\d+\.index\.js$/.test(f))
      .map((f) => join(dir, f));
  }, 180_000);

  it('are minified', () => {
    // @actions/core's chunk, and GitHub's client with its plugins, at least.
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    for (const chunk of chunks) {
      // webpack writes `/***/` before each module of a chunk; minified, no comment is left.
      expect({ chunk, webpackComments: readFileSync(chunk, 'utf8').includes('/***/') }).toEqual({
        chunk,
        webpackComments: false,
      });
    }
  });

  it('are only those index.js loads: no chunk of an earlier build is shipped', () => {
    // webpack's loader asks for a chunk by its id: `__nccwpck_require__.e(<id>)`.
    const loaded = new Set([...readFileSync(BUNDLE, 'utf8').matchAll(/\.e\((\d+)\)/g)].map((m) => m[1]));
    const files = chunks.map((c) => /(\d+)\.index\.js$/.exec(c)![1]).sort();
    expect(files).toEqual([...loaded].sort());
  });

  it('export their id and modules as the loader in index.js reads them', async () => {
    for (const chunk of chunks) {
      const loaded = (await import(pathToFileURL(chunk).href)) as Chunk;
      expect(loaded.ids).toEqual([loaded.id]);
      expect(chunk.endsWith(`/${loaded.id}.index.js`)).toBe(true);
      expect(Object.keys(loaded.modules).length).toBeGreaterThan(0);
      for (const factory of Object.values(loaded.modules)) expect(typeof factory).toBe('function');
    }
  });
});
