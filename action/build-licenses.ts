import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * Writes the license notices of every package in the bundle, for `npm run bundle`:
 * `node --import tsx action/build-licenses.ts <ncc stats.json> <licenses.txt>`. ncc's own
 * `--license` keeps only the last chunk's packages once the bundle is split (GitHub's client
 * is loaded on demand from a second file), so the list is made here from ncc's module stats.
 */
const StatsModule = z.object({
  identifier: z.string().optional(),
  /** The modules webpack concatenated into this one. */
  modules: z.array(z.object({ identifier: z.string().optional() })).optional(),
});
const Stats = z.object({ modules: z.array(StatsModule) });
const PackageJson = z.object({ name: z.string(), license: z.string().optional() });

/** The package directory of a module's file: the path up to its innermost node_modules package. */
function packageDirOf(identifier: string): string | null {
  // Loaders come first, separated by `!`; the module's own file is last.
  const file = identifier.slice(identifier.lastIndexOf('!') + 1).split('|')[0]!;
  const match = /^(.*\/node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(file);
  return match ? match[1]! : null;
}

/** `name`, its license, then its license text, package after package in name order. */
function licensesOf(stats: unknown): string {
  const dirs = new Set<string>();
  for (const m of Stats.parse(stats).modules) {
    for (const inner of [m, ...(m.modules ?? [])]) {
      const dir = inner.identifier ? packageDirOf(inner.identifier) : null;
      if (dir) dirs.add(dir);
    }
  }
  const entries = [...dirs].map((dir) => {
    const pkg = PackageJson.parse(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')));
    const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = file ? readFileSync(join(dir, file), 'utf8').trim() : '';
    return { name: pkg.name, text: [pkg.name, pkg.license ?? 'UNKNOWN', text].filter(Boolean).join('\n') };
  });
  const unique = new Map(entries.map((e) => [e.name, e.text]));
  return `${[...unique.keys()]
    .sort()
    .map((name) => unique.get(name))
    .join('\n\n')}\n`;
}

const [statsFile, outFile] = process.argv.slice(2);
if (statsFile && outFile && existsSync(statsFile)) {
  writeFileSync(outFile, licensesOf(JSON.parse(readFileSync(statsFile, 'utf8'))));
}
