import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { transform } from 'esbuild';
import { z } from 'zod';

/**
 * Minifies the chunks the Action loads after its start, for `npm run bundle`:
 * `node --import tsx action/minify-chunks.ts <ncc stats.json> <dist/action>`. ncc's `--minify`
 * minifies the entry (index.js) only and writes the chunks as webpack emitted them, so
 * @actions/core's chunk, loaded on every run once the first request is sent, cost about 15 ms
 * more CPU per run than minified (docs/performance.md).
 *
 * The chunks are named by ncc's stats (those not loaded at start) rather than by listing the
 * folder. ncc does not empty the folder: `npm run bundle` removes it first, so that no chunk of
 * an earlier build is committed and shipped with the Action.
 */
const Stats = z.object({
  chunks: z.array(z.object({ initial: z.boolean(), files: z.array(z.string()) })),
});

/**
 * esbuild's options for one chunk. The chunks are ES modules (dist/action/package.json says
 * `"type": "module"`) whose `id`, `ids` and `modules` exports webpack's loader in index.js
 * reads, so the format stays `esm` and the export names stay as they are. Names of functions
 * and classes are kept, as ncc keeps them in index.js: stack traces and inspected errors read
 * the same (measured within the noise of a run's CPU time). The target is the oldest Node that
 * runs the bundle: action.yml's node24 on GitHub, this repository's Node 20 in its tests.
 */
const OPTIONS = {
  minify: true,
  keepNames: true,
  format: 'esm',
  target: 'node20',
  legalComments: 'inline',
} as const;

async function minifyChunks(statsFile: string, dir: string): Promise<void> {
  const stats = Stats.parse(JSON.parse(readFileSync(statsFile, 'utf8')));
  const files = stats.chunks.filter((c) => !c.initial).flatMap((c) => c.files);
  // Not carried over: a source map would have to be rewritten with its chunk.
  const maps = files.filter((f) => f.endsWith('.map') || existsSync(join(dir, `${f}.map`)));
  if (maps.length > 0)
    throw new Error(`minify-chunks: source maps are not carried over yet (${maps.join(', ')})`);
  for (const file of files.filter((f) => f.endsWith('.js'))) {
    const path = join(dir, file);
    const { code } = await transform(readFileSync(path, 'utf8'), { ...OPTIONS, sourcefile: file });
    writeFileSync(path, code);
  }
}

const [statsFile, dir] = process.argv.slice(2);
// Unlike the license list, a missing stats file is an error: the chunks would ship unminified.
if (!statsFile || !dir) throw new Error('usage: minify-chunks.ts <ncc stats.json> <dist/action>');
await minifyChunks(statsFile, dir);
