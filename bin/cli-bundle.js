// The CLI compiled ahead of time: cli/entry.ts bundled by esbuild into dist/cli (not committed),
// so `slipway` starts without compiling TypeScript. `npm install` and `npm ci` build it (the
// `prepare` script); bin/slipway.js rebuilds it when a file it was built from has changed since,
// so a checkout that moved on (git pull, an edit) never runs yesterday's CLI.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'cli');
const ENTRY = join(OUT, 'main.js');
/** The files the bundle was built from, relative to ROOT: what the freshness check stats. */
const INPUTS = join(OUT, 'inputs.json');

/** Builds dist/cli: the entry and its chunks (each command's work loads only when it runs). */
export async function buildCli() {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'cli/entry.ts' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: true,
    write: false,
    metafile: true,
    outdir: OUT,
    chunkNames: 'chunk-[hash]',
    // The server's commands load the TypeScript server through tsx: never bundled.
    external: ['tsx/esm/api'],
    // CommonJS packages (dotenv, ignore) require Node's modules.
    banner: {
      js: "import{createRequire as __slipwayRequire}from'node:module';const require=__slipwayRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  mkdirSync(OUT, { recursive: true });
  const written = new Set();
  // Chunks first and the entry last, each by rename, so a CLI starting meanwhile reads whole files.
  const files = [...result.outputFiles].sort((a, b) => Number(a.path === ENTRY) - Number(b.path === ENTRY));
  for (const file of files) {
    writeFileSync(`${file.path}.${process.pid}.tmp`, file.contents);
    renameSync(`${file.path}.${process.pid}.tmp`, file.path);
    written.add(file.path);
  }
  const inputs = [
    relative(ROOT, fileURLToPath(import.meta.url)),
    ...Object.keys(result.metafile.inputs).map((p) => relative(ROOT, resolve(ROOT, p))),
  ];
  writeFileSync(`${INPUTS}.${process.pid}.tmp`, JSON.stringify(inputs));
  renameSync(`${INPUTS}.${process.pid}.tmp`, INPUTS);
  pruneChunks(written);
  return ENTRY;
}

/** Chunks of older builds, once no CLI started before the rebuild can still be loading them. */
function pruneChunks(keep) {
  const before = Date.now() - 10 * 60_000;
  for (const name of readdirSync(OUT)) {
    const path = join(OUT, name);
    if (!name.startsWith('chunk-') || keep.has(path)) continue;
    if (statSync(path).mtimeMs < before) rmSync(path, { force: true });
  }
}

/** True when dist/cli exists and no file it was built from is newer than it. */
export function isFresh() {
  let built;
  let inputs;
  try {
    built = statSync(ENTRY).mtimeMs;
    inputs = JSON.parse(readFileSync(INPUTS, 'utf8'));
  } catch {
    return false;
  }
  for (const input of inputs) {
    try {
      if (statSync(join(ROOT, input)).mtimeMs > built) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** The URL of the CLI's entry, built first when missing or older than its sources. */
export async function freshCli() {
  if (!isFresh()) await buildCli();
  return pathToFileURL(ENTRY).href;
}

// `node bin/cli-bundle.js` (npm run bundle:cli, and npm's prepare) builds it; an install before
// the sources are there (deploy/Dockerfile's dependency layer) leaves it to the next step.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (existsSync(join(ROOT, 'cli', 'entry.ts'))) await buildCli();
  else console.error('cli-bundle: no cli/ sources yet; `npm run bundle:cli` builds the CLI later');
}
