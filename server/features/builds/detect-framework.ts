import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  frameworks as vercelFrameworks,
  type Framework,
  type FrameworkDetectionItem,
} from '@vercel/frameworks';
import { BuildError } from '../../platform/sandbox/build-error.ts';
import { angularOutputDirectory } from './angular-output.ts';
import { hasDependency, hasScript, readPackageJson, type PackageJson } from './package-json.ts';
import { detectPackageManager, type PackageManager } from './package-manager.ts';

export type AppKind = 'static' | 'node';

export interface DetectedFramework {
  /** Stored as the project's `framework`: a @vercel/frameworks slug, or `static` / `node`. */
  slug: string;
  /** For people: "Vite", "Next.js". */
  name: string;
  /** Shell command that builds the app, or null when there is nothing to build. */
  buildCommand: string | null;
  /** Directory, relative to the repository root, whose files are served (`.` for the root). */
  outputDirectory: string;
  /** Directories tried in order when `outputDirectory` is missing after the build. */
  outputFallbacks: string[];
  /** Unknown paths answer `index.html` (client-side routing). */
  spa: boolean;
  /** `static`: files served by the edge; `node`: a process the edge runs. */
  kind: AppKind;
  /** Shell command that starts a `node` app; null for static apps (and for a server with no way to start it). */
  startCommand: string | null;
  /** Said when the output directory is missing after the build. */
  outputHint: string | null;
  /** `detected` from the files, or `configured` on the project. */
  source: 'detected' | 'configured';
  packageManager: PackageManager;
}

/**
 * How Slipway builds a framework where @vercel/frameworks' settings describe Vercel's own
 * runtime rather than a static site (Next.js, Nuxt, SvelteKit), or where it says nothing of
 * client-side routing. Everything not listed uses @vercel/frameworks' settings as they are.
 */
interface Profile {
  kind?: AppKind;
  output?: string | ((dir: string) => Promise<string>);
  spa?: boolean;
  /** Command to run when the preferred script is absent (default: @vercel/frameworks'). */
  build?: string;
  /** package.json script preferred over `build` (default `build`). */
  script?: string;
  hint?: string;
}

const PROFILES: Record<string, Profile> = {
  // Frameworks whose build may make a server (outputs/): the output folder is their static
  // site's, used when the build made no server.
  nextjs: {
    output: 'out',
    hint: "Next.js makes either a server (`.next/standalone`) or, with `output: 'export'`, the static site `out`.",
  },
  nuxtjs: {
    // `nuxt build` makes a server; a build script running `nuxt generate` pre-renders every page.
    output: '.output/public',
    build: 'nuxt build',
    hint: 'Nuxt makes `.output` with `nuxt build` (a server) or `nuxt generate` (a static site).',
  },
  sveltekit: {
    output: 'build',
    hint: 'SvelteKit deploys with adapter-auto, adapter-node (a server) or adapter-static (the static site `build`).',
  },
  'sveltekit-1': {
    output: 'build',
    hint: 'SvelteKit deploys with adapter-auto, adapter-node (a server) or adapter-static (the static site `build`).',
  },
  vite: { output: 'dist', spa: true },
  astro: { output: 'dist' },
  gatsby: { output: 'public' },
  'create-react-app': { output: 'build', spa: true },
  'docusaurus-2': { output: 'build' },
  docusaurus: { output: 'build' },
  eleventy: { output: '_site' },
  angular: { output: angularOutputDirectory, spa: true },
  'ionic-angular': { output: 'www', spa: true },
  'ionic-react': { output: 'build', spa: true },
  vue: { output: 'dist', spa: true },
  preact: { output: 'build', spa: true },
  ember: { output: 'dist', spa: true },
  // Client-routed apps whose output directory @vercel/frameworks gets right (server/features/serving/edge's
  // SPA_FRAMEWORKS names the same set).
  svelte: { spa: true },
  polymer: { spa: true },
  dojo: { spa: true },
  stencil: { spa: true },
  umijs: { spa: true },
  sanity: { spa: true },
  'sanity-v2': { spa: true },
  // Server-rendered frameworks: they run as a Node.js process started by the `start` script.
  remix: { kind: 'node' },
  'react-router': { kind: 'node' },
  solidstart: { kind: 'node' },
  // Their build makes a Nitro server (outputs/nitro.ts); without a build script, their own command.
  'solidstart-1': { kind: 'node', build: 'vinxi build' },
  'tanstack-start': { kind: 'node', build: 'vite build' },
  'tanstack-start-lovable': { kind: 'node', build: 'vite build' },
  nitro: { kind: 'node' },
  blitzjs: { kind: 'node' },
  redwoodjs: { kind: 'node' },
  hydrogen: { kind: 'node' },
  mastra: { kind: 'node' },
};

/**
 * Detection rules that differ from @vercel/frameworks'. TanStack Start: the list also asks for
 * `@tanstack/router-plugin`, which the project of TanStack Start's own "build from scratch" guide
 * does not list (its Vite plugin brings it), so such a project was taken for a Vite SPA.
 */
const DETECTORS: Record<string, Framework['detectors']> = {
  'tanstack-start': {
    some: [{ matchPackage: '@tanstack/react-start' }, { matchPackage: '@tanstack/solid-start' }],
  },
};

/** Files a plain Node.js server is started from when package.json has no `start` script. */
const NODE_ENTRY_FILES = [
  'server.js',
  'server.mjs',
  'server.cjs',
  'src/server.js',
  'src/server.mjs',
  'src/server.cjs',
];

/** Where a build without a known framework usually writes its site, tried in order. */
const GENERIC_OUTPUTS = ['dist', 'build', 'out', 'public', '_site', '.'];

const isScriptPath = (path: string) => path === 'package.json' || /\.[cm]?[jt]sx?$/.test(path);

/**
 * The frameworks Slipway can build, in @vercel/frameworks' order, which is the precedence:
 * its list puts the more specific framework first (Next.js before Create React App, Nuxt,
 * Astro, SvelteKit and Vue before Vite, Ionic Angular before Angular), and `supersedes`
 * settles the rest. Runtime presets (Python, Go, containers) and frameworks recognised only
 * by non-JavaScript files (Hugo, Jekyll) are left out: the builder runs Node.js.
 */
const CANDIDATES: readonly (Framework & { slug: string })[] = (vercelFrameworks as readonly Framework[])
  .filter((fw): fw is Framework & { slug: string } => {
    if (!fw.slug || fw.runtimeFramework || !fw.detectors) return false;
    const items = [...(fw.detectors.every ?? []), ...(fw.detectors.some ?? [])];
    return items.some(
      (item) => item.matchPackage !== undefined || (item.path !== undefined && isScriptPath(item.path)),
    );
  })
  .map((fw) => (DETECTORS[fw.slug] ? { ...fw, detectors: DETECTORS[fw.slug] } : fw));

interface Repo {
  dir: string;
  pkg: PackageJson | null;
  packageManager: PackageManager;
  read(path: string): Promise<string | null>;
  isFile(path: string): Promise<boolean>;
}

function openRepo(dir: string, pkg: PackageJson | null, packageManager: PackageManager): Repo {
  const contents = new Map<string, Promise<string | null>>();
  const read = (path: string) => {
    let cached = contents.get(path);
    if (!cached) {
      cached = readFile(join(dir, path), 'utf8').catch(() => null);
      contents.set(path, cached);
    }
    return cached;
  };
  const isFile = (path: string) =>
    stat(join(dir, path)).then(
      (s) => s.isFile(),
      () => false,
    );
  return { dir, pkg, packageManager, read, isFile };
}

async function itemMatches(item: FrameworkDetectionItem, repo: Repo): Promise<boolean> {
  if (item.matchPackage !== undefined) return hasDependency(repo.pkg, item.matchPackage);
  if (item.path === undefined) return false;
  if (item.matchContent === undefined) return repo.isFile(item.path);
  const content = await repo.read(item.path);
  return content !== null && new RegExp(item.matchContent, 'm').test(content);
}

async function frameworkMatches(fw: Framework, repo: Repo): Promise<boolean> {
  const every = fw.detectors?.every ?? [];
  const some = fw.detectors?.some ?? [];
  for (const item of every) if (!(await itemMatches(item, repo))) return false;
  if (some.length === 0) return every.length > 0;
  for (const item of some) if (await itemMatches(item, repo)) return true;
  return false;
}

const settingValue = (setting: Framework['settings']['outputDirectory']): string | null =>
  'value' in setting && typeof setting.value === 'string' ? setting.value : null;

async function firstEntryFile(repo: Repo, candidates: string[]): Promise<string | null> {
  for (const path of candidates) if (/\.[cm]?js$/.test(path) && (await repo.isFile(path))) return path;
  return null;
}

/** Turns a framework of the list into how Slipway builds and serves it. */
async function settle(fw: Framework & { slug: string }, repo: Repo, source: DetectedFramework['source']) {
  const profile = PROFILES[fw.slug] ?? {};
  const vercelOutput = settingValue(fw.settings.outputDirectory);
  // No static output directory in the list means a server framework (Express, Hono, ...).
  const kind: AppKind =
    profile.kind ??
    (profile.output !== undefined || (vercelOutput && vercelOutput !== 'N/A') ? 'static' : 'node');
  const run = (script: string) => repo.packageManager.runScript(script).join(' ');

  if (kind === 'node') {
    const detectorFiles = [...(fw.detectors?.some ?? []), ...(fw.detectors?.every ?? [])].flatMap((item) =>
      item.path && item.path !== 'package.json' ? [item.path] : [],
    );
    return nodeApp(repo, fw.slug, fw.name, source, [...detectorFiles, ...NODE_ENTRY_FILES], run);
  }

  const script = fw.settings.buildCommand.ignorePackageJsonScript ? null : (profile.script ?? 'build');
  const buildCommand =
    script && hasScript(repo.pkg, script)
      ? run(script)
      : (profile.build ?? fw.settings.buildCommand.value ?? null);
  const output =
    typeof profile.output === 'function'
      ? await profile.output(repo.dir)
      : (profile.output ?? vercelOutput ?? '.');
  return {
    slug: fw.slug,
    name: fw.name,
    buildCommand,
    outputDirectory: output,
    outputFallbacks: [],
    spa: profile.spa ?? false,
    kind,
    startCommand: null,
    outputHint: profile.hint ?? null,
    source,
    packageManager: repo.packageManager,
  } satisfies DetectedFramework;
}

async function nodeApp(
  repo: Repo,
  slug: string,
  name: string,
  source: DetectedFramework['source'],
  entryFiles: string[],
  run: (script: string) => string,
): Promise<DetectedFramework> {
  const entry = hasScript(repo.pkg, 'start') ? null : await firstEntryFile(repo, entryFiles);
  return {
    slug,
    name,
    buildCommand: hasScript(repo.pkg, 'build') ? run('build') : (PROFILES[slug]?.build ?? null),
    outputDirectory: '.',
    outputFallbacks: [],
    spa: false,
    kind: 'node',
    startCommand: hasScript(repo.pkg, 'start') ? run('start') : entry ? `node ${entry}` : null,
    outputHint: null,
    source,
    packageManager: repo.packageManager,
  };
}

function staticSite(repo: Repo, source: DetectedFramework['source']): DetectedFramework {
  const build = hasScript(repo.pkg, 'build');
  return {
    slug: 'static',
    name: 'Static site',
    buildCommand: build ? repo.packageManager.runScript('build').join(' ') : null,
    outputDirectory: build ? GENERIC_OUTPUTS[0]! : '.',
    outputFallbacks: build ? GENERIC_OUTPUTS.slice(1) : [],
    spa: false,
    kind: 'static',
    startCommand: null,
    outputHint: null,
    source,
    packageManager: repo.packageManager,
  };
}

/**
 * Works out how to build the repository checked out in `dir`. With `framework` (the project's
 * setting) that framework's rules apply without detection. Without it, the precedence is:
 *
 * 1. the first framework of @vercel/frameworks' list whose detectors match (see CANDIDATES);
 * 2. `node`: a `start` script, or a `server.js` entry, makes a Node.js server;
 * 3. `static` with a build: a `build` script whose output is the first of dist, build, out,
 *    public, _site that exists, else the root;
 * 4. `static` without a build: `index.html` at the root, served as it is.
 *
 * Static frameworks run the project's own `build` script when it has one, else the
 * framework's command. Returns null when nothing matches.
 */
export async function detectFramework(
  dir: string,
  opts: { framework?: string | null } = {},
): Promise<DetectedFramework | null> {
  const pkg = await readPackageJson(dir);
  const packageManager = await detectPackageManager(dir, pkg);
  const repo = openRepo(dir, pkg, packageManager);
  const run = (script: string) => packageManager.runScript(script).join(' ');

  if (opts.framework) {
    const slug = opts.framework;
    if (slug === 'static') return staticSite(repo, 'configured');
    if (slug === 'node') return nodeApp(repo, 'node', 'Node.js', 'configured', NODE_ENTRY_FILES, run);
    const fw = CANDIDATES.find((f) => f.slug === slug);
    if (!fw) {
      throw new BuildError(
        `The project's framework "${slug}" is not one Slipway can build. ` +
          'Clear it to detect the framework from the repository, or set one of: ' +
          `${supportedFrameworkSlugs().join(', ')}.`,
      );
    }
    return settle(fw, repo, 'configured');
  }

  const matched: (Framework & { slug: string })[] = [];
  for (const fw of CANDIDATES) if (await frameworkMatches(fw, repo)) matched.push(fw);
  const superseded = new Set(matched.flatMap((fw) => fw.supersedes ?? []));
  const winner = matched.find((fw) => !superseded.has(fw.slug));
  if (winner) return settle(winner, repo, 'detected');

  if (hasScript(pkg, 'start') || (await firstEntryFile(repo, NODE_ENTRY_FILES))) {
    return nodeApp(repo, 'node', 'Node.js', 'detected', NODE_ENTRY_FILES, run);
  }
  if (hasScript(pkg, 'build') || (await repo.isFile('index.html'))) return staticSite(repo, 'detected');
  return null;
}

/** Every value the project's `framework` may take. */
export function supportedFrameworkSlugs(): string[] {
  return [...CANDIDATES.map((fw) => fw.slug), 'static', 'node'];
}
