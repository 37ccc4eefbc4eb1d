import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { solidStartFiles, tanstackStartFiles } from './starter-files.ts';

/**
 * The default starter projects of real frameworks, generated with their real generators from the
 * npm registry, for slow tests that deploy them with zero settings.
 *
 * `starter(name)` returns the path of a git repository (branch `main`, one commit holding the
 * generated files and their package-lock.json, no node_modules or build output) made once per
 * machine under `os.tmpdir()/slipway-starters/<name>-<hash>` (or `$SLIPWAY_STARTERS_DIR`), where the
 * hash covers everything below that shapes the result. Treat that folder as read-only: clone it.
 *
 * Versions are pinned to the newest that run on Node 20.20 (the project's floor): several newer
 * releases refuse Node 20 (see `node20` in each entry). Only the npm registry is needed: where a
 * generator fetches its template from GitHub (nuxi, create-astro, create-react-router,
 * create-solid) or makes a project that needs Node 22 (create-start-app), the entry writes the
 * smallest project of the framework's own docs instead and lets npm make the lockfile.
 */

export type StarterName =
  | 'next'
  | 'sveltekit'
  | 'nuxt'
  | 'astro'
  | 'astro-node'
  | 'react-router'
  | 'solidstart'
  | 'tanstack-start'
  | 'angular';

/** An exact text replacement that lets the starter build without internet. */
export interface OfflineEdit {
  file: string;
  find: string;
  replace: string;
  why: string;
}

/** A static-asset folder of the build output that an edge can serve itself. */
export interface StaticDir {
  /** Path relative to the project root, after the build. */
  dir: string;
  /** URL prefix the folder's files are served under. */
  urlPrefix: string;
  /** Sub-folder of `dir` whose file names carry a content hash (cacheable forever). */
  immutable?: string;
}

export interface StarterFacts {
  name: StarterName;
  framework: string;
  /** Package versions that end up installed (the lockfile pins the rest). */
  versions: Record<string, string>;
  /**
   * How the starter is made: `npx` runs the framework's generator (args after `npx -y`; `{dir}` is
   * the new project's folder name); `files` writes the docs' minimal project and runs `npm install`.
   */
  generator: { kind: 'npx'; args: string[] } | { kind: 'files'; files: Record<string, string>; why: string };
  /**
   * Exact versions written into the generated package.json before `npm install` (the generator then
   * runs without its own install): where the ranges it writes would pick releases this registry
   * cannot install together.
   */
  pin?: { versions: Record<string, string>; why: string };
  offlineEdits: OfflineEdit[];
  /** Extra environment for `npm run build` that the platform must set (none = zero settings). */
  buildEnv: Record<string, string>;
  /** Steps a zero-settings platform needs before `npm run build`, if any. */
  preBuild?: string[];
  /** What serves requests after the build, relative to the project root. */
  serverEntry: string | null;
  /** Start command (cwd = project root) and the environment variables for the listen address. */
  start: { command: string[]; portEnv: string[]; hostEnv: string[] } | null;
  staticDirs: StaticDir[];
  /** Does the server entry need the project's node_modules at run time? */
  needsNodeModules: boolean;
  /** Node 20 compatibility notes. */
  node20: string;
  /** Typical durations on the 2-core machine, seconds (warm npm cache). */
  seconds: { generate: number; npmCi: number; build: number; firstResponse: number };
}

const ANGULAR = '21.2.24';

const NEXT_FONT_LINE = 'import { Geist, Geist_Mono } from "next/font/google";';

export const STARTERS: Record<StarterName, StarterFacts> = {
  next: {
    name: 'next',
    framework: 'Next.js (App Router, create-next-app defaults: TypeScript, Tailwind 4, ESLint, Turbopack)',
    versions: { 'create-next-app': '16.4.3', next: '16.4.3', react: '19.3.0' },
    generator: {
      kind: 'npx',
      args: ['create-next-app@16.4.3', '{dir}', '--yes', '--use-npm', '--disable-git'],
    },
    offlineEdits: [
      {
        file: 'app/layout.tsx',
        find: NEXT_FONT_LINE,
        replace:
          'const Geist = (_options: { variable: string; subsets: string[] }) => ({ variable: "", className: "" });\n' +
          `const Geist_Mono = Geist; // offline: was \`${NEXT_FONT_LINE}\``,
        why:
          'next/font/google downloads the Geist CSS and fonts from fonts.googleapis.com at build time; ' +
          'the build fails offline ("Failed to fetch Geist from Google Fonts"). The stub keeps the rest ' +
          'of layout.tsx unchanged; text falls back to the system font. Without editing the source, ' +
          'NEXT_FONT_GOOGLE_MOCKED_RESPONSES=<file.cjs exporting { [cssUrl]: cssText }> does the same.',
      },
    ],
    buildEnv: {},
    serverEntry: '.next (next start) or .next/standalone/server.js when NEXT_PRIVATE_STANDALONE=1 at build',
    start: { command: ['npx', 'next', 'start', '-H', '127.0.0.1'], portEnv: ['PORT'], hostEnv: [] },
    staticDirs: [
      { dir: '.next/static', urlPrefix: '/_next/static/', immutable: '.' },
      { dir: 'public', urlPrefix: '/' },
    ],
    needsNodeModules: true,
    node20: 'OK: next 16 needs node >=20.9.',
    seconds: { generate: 22, npmCi: 15, build: 17, firstResponse: 0.5 },
  },
  sveltekit: {
    name: 'sveltekit',
    framework: 'SvelteKit (sv create, minimal template, TypeScript, adapter-auto)',
    versions: { sv: '0.17.1', '@sveltejs/kit': '2.70.4', '@sveltejs/adapter-auto': '7.0.1', vite: '8.3.8' },
    generator: {
      kind: 'npx',
      args: [
        'sv@0.17.1',
        'create',
        '{dir}',
        '--template',
        'minimal',
        '--types',
        'ts',
        '--no-add-ons',
        '--install',
        'npm',
      ],
    },
    offlineEdits: [],
    buildEnv: { GCP_BUILDPACKS: '1' },
    preBuild: ['npm install --no-save @sveltejs/adapter-node@5'],
    serverEntry: 'build/index.js (adapter-node, picked by adapter-auto when GCP_BUILDPACKS is set)',
    start: { command: ['node', 'build'], portEnv: ['PORT'], hostEnv: ['HOST'] },
    staticDirs: [{ dir: 'build/client', urlPrefix: '/', immutable: '_app/immutable' }],
    needsNodeModules: false,
    node20:
      "OK with kit 2.x (the template asks ^2.63). kit 3 needs node >=22.17, and the template's .npmrc has " +
      'engine-strict=true, so npm ci fails outright on Node 20 if the lockfile ever holds kit 3.',
    seconds: { generate: 11, npmCi: 5, build: 5, firstResponse: 0.2 },
  },
  nuxt: {
    name: 'nuxt',
    framework: 'Nuxt 4 (minimal starter of nuxt/starter v4 + a server/api route)',
    versions: { nuxt: '4.4.5', nitropack: '2.13.5' },
    generator: {
      kind: 'files',
      why: 'nuxi init downloads its template from raw.githubusercontent.com, which is unreachable',
      files: {
        'package.json': `${JSON.stringify(
          {
            name: 'nuxt-app',
            type: 'module',
            private: true,
            scripts: {
              build: 'nuxt build',
              dev: 'nuxt dev',
              generate: 'nuxt generate',
              preview: 'nuxt preview',
              postinstall: 'nuxt prepare',
            },
            dependencies: { nuxt: '4.4.5', vue: '^3.5.0', 'vue-router': '^4.5.0' },
          },
          null,
          2,
        )}\n`,
        'nuxt.config.ts':
          "// https://nuxt.com/docs/api/configuration/nuxt-config\nexport default defineNuxtConfig({\n  compatibilityDate: '2025-07-15',\n  devtools: { enabled: true }\n})\n",
        'app/app.vue':
          '<template>\n  <div>\n    <NuxtRouteAnnouncer />\n    <NuxtWelcome />\n  </div>\n</template>\n',
        'server/api/hello.ts': "export default defineEventHandler(() => ({ hello: 'world' }))\n",
        'public/robots.txt': 'User-Agent: *\nDisallow:\n',
        'tsconfig.json':
          '{\n  "files": [],\n  "references": [\n    { "path": "./.nuxt/tsconfig.app.json" },\n    { "path": "./.nuxt/tsconfig.server.json" },\n    { "path": "./.nuxt/tsconfig.shared.json" },\n    { "path": "./.nuxt/tsconfig.node.json" }\n  ]\n}\n',
        '.gitignore':
          '.output\n.data\n.nuxt\n.nitro\n.cache\ndist\nnode_modules\nlogs\n*.log\n.DS_Store\n.env\n.env.*\n!.env.example\n',
      },
    },
    offlineEdits: [],
    buildEnv: {},
    serverEntry: '.output/server/index.mjs (self-contained: .output/server/node_modules is traced in)',
    start: {
      command: ['node', '.output/server/index.mjs'],
      portEnv: ['NITRO_PORT', 'PORT'],
      hostEnv: ['NITRO_HOST', 'HOST'],
    },
    staticDirs: [{ dir: '.output/public', urlPrefix: '/', immutable: '_nuxt' }],
    needsNodeModules: false,
    node20:
      'nuxt 4.5.x needs node ^22.19; 4.4.5 is the last for Node 20. Even then npm warns EBADENGINE for ' +
      'transitive @babel/parser 8, ast-walker-scope 0.10, chokidar 6, rollup-plugin-visualizer 7 (Node 22 ' +
      'only on paper); build and server work on 20.20.',
    seconds: { generate: 60, npmCi: 40, build: 7, firstResponse: 0.3 },
  },
  astro: {
    name: 'astro',
    framework: 'Astro 5 (minimal template, static output)',
    versions: { astro: '5.18.2' },
    generator: {
      kind: 'files',
      why: 'create-astro downloads its template from GitHub ("Unable to connect to the internet"); create-astro 5.x also refuses Node 20',
      files: astroFiles(
        'astro',
        {},
        "// @ts-check\nimport { defineConfig } from 'astro/config';\n\n// https://astro.build/config\nexport default defineConfig({});\n",
      ),
    },
    offlineEdits: [],
    buildEnv: {},
    serverEntry: null,
    start: null,
    staticDirs: [{ dir: 'dist', urlPrefix: '/', immutable: '_astro' }],
    needsNodeModules: false,
    node20:
      'astro 6 and 7 refuse to run on Node 20 (bin/astro.mjs hard-codes >=22.12 although astro@6.0.0-6.0.5 ' +
      'declare ^20.19.1); 5.18.2 is the last that runs. create-astro >=5.0.2 needs >=22.12 too.',
    seconds: { generate: 29, npmCi: 14, build: 3, firstResponse: 0 },
  },
  'astro-node': {
    name: 'astro-node',
    framework: "Astro 5 + @astrojs/node (output: 'server', mode: 'standalone')",
    versions: { astro: '5.18.2', '@astrojs/node': '9.5.5' },
    generator: {
      kind: 'files',
      why: 'as for astro; the adapter setup is the one of the @astrojs/node docs',
      files: astroFiles(
        'astro-node',
        { '@astrojs/node': '9.5.5' },
        "// @ts-check\nimport { defineConfig } from 'astro/config';\nimport node from '@astrojs/node';\n\n// https://astro.build/config\nexport default defineConfig({\n  output: 'server',\n  adapter: node({ mode: 'standalone' }),\n});\n",
      ),
    },
    offlineEdits: [],
    buildEnv: {},
    serverEntry: 'dist/server/entry.mjs (imports astro, @astrojs/node... from node_modules)',
    start: { command: ['node', 'dist/server/entry.mjs'], portEnv: ['PORT'], hostEnv: ['HOST'] },
    staticDirs: [{ dir: 'dist/client', urlPrefix: '/', immutable: '_astro' }],
    needsNodeModules: true,
    node20: 'as for astro; @astrojs/node 10+ needs astro 6+, so 9.5.5.',
    seconds: { generate: 28, npmCi: 18, build: 3, firstResponse: 0.25 },
  },
  'react-router': {
    name: 'react-router',
    framework: 'React Router 7 framework mode (default template reduced: no Tailwind)',
    versions: { 'react-router': '7.18.4', '@react-router/dev': '7.18.4', vite: '7.3.8' },
    generator: {
      kind: 'files',
      why: 'create-react-router downloads its template from GitHub; create-react-router 8 needs node >=22.22',
      files: reactRouterFiles(),
    },
    offlineEdits: [],
    buildEnv: {},
    serverEntry: 'build/server/index.js (served by react-router-serve)',
    start: { command: ['npm', 'start'], portEnv: ['PORT'], hostEnv: ['HOST'] },
    staticDirs: [{ dir: 'build/client', urlPrefix: '/', immutable: 'assets' }],
    needsNodeModules: true,
    node20: 'react-router 8 needs node >=22.22; 7.18.x is the last for Node 20.',
    seconds: { generate: 22, npmCi: 18, build: 7, firstResponse: 0.35 },
  },
  solidstart: {
    name: 'solidstart',
    framework: 'SolidStart 1 (the basic template: @solidjs/router file routes, vinxi, Nitro)',
    versions: { '@solidjs/start': '1.3.2', vinxi: '0.5.11', 'solid-js': '1.9.19', nitropack: '2.13.6' },
    generator: {
      kind: 'files',
      why: 'create-solid downloads its templates from GitHub (raw.githubusercontent.com/solidjs/templates)',
      files: solidStartFiles(),
    },
    offlineEdits: [],
    buildEnv: {},
    serverEntry: '.output/server/index.mjs (Nitro, node-server preset; its dependencies traced in)',
    start: { command: ['node', '.output/server/index.mjs'], portEnv: ['PORT'], hostEnv: ['HOST'] },
    staticDirs: [{ dir: '.output/public', urlPrefix: '/', immutable: '_build/assets' }],
    needsNodeModules: false,
    node20:
      '@solidjs/start 2 needs node >=24; 1.3.2 (vinxi 0.5) is the last 1.x. npm warns EBADENGINE for ' +
      "Nitro's rollup-plugin-visualizer 7 (>=22, unused by the build); build and server work on 20.20.",
    seconds: { generate: 60, npmCi: 30, build: 50, firstResponse: 0.3 },
  },
  'tanstack-start': {
    name: 'tanstack-start',
    framework: 'TanStack Start 1.131 (React; the project of its "Build a Project from Scratch" guide)',
    versions: { '@tanstack/react-start': '1.131.50', vite: '7.3.8', nitropack: '2.13.6' },
    generator: {
      kind: 'files',
      why:
        'create-start-app 0.59 (@tanstack/create 0.70) writes "@tanstack/react-start": "latest", which installs ' +
        "1.169, declared for node >=22.12 (1.132 and later all are); the docs' project pins 1.131.50",
      files: tanstackStartFiles(),
    },
    offlineEdits: [],
    buildEnv: {},
    serverEntry: '.output/server/index.mjs (Nitro, node-server preset; its dependencies traced in)',
    start: { command: ['node', '.output/server/index.mjs'], portEnv: ['PORT'], hostEnv: ['HOST'] },
    staticDirs: [{ dir: '.output/public', urlPrefix: '/' }],
    needsNodeModules: false,
    node20:
      '@tanstack/react-start 1.132+ declares node >=22.12; 1.131.50 is the last for Node 20 ' +
      '(EBADENGINE warning for rollup-plugin-visualizer 7, as for SolidStart).',
    seconds: { generate: 60, npmCi: 30, build: 35, firstResponse: 0.3 },
  },
  angular: {
    name: 'angular',
    framework: 'Angular 21 with server rendering (ng new --ssr --defaults: @angular/ssr, Express)',
    versions: { '@angular/cli': ANGULAR, '@angular/core': ANGULAR, '@angular/ssr': ANGULAR },
    generator: {
      kind: 'npx',
      args: [
        `@angular/cli@${ANGULAR}`,
        'new',
        '{dir}',
        '--ssr',
        '--defaults',
        '--skip-git',
        '--skip-install',
        '--package-manager=npm',
      ],
    },
    pin: {
      versions: {
        '@angular/common': ANGULAR,
        '@angular/compiler': ANGULAR,
        '@angular/core': ANGULAR,
        '@angular/forms': ANGULAR,
        '@angular/platform-browser': ANGULAR,
        '@angular/platform-server': ANGULAR,
        '@angular/router': ANGULAR,
        '@angular/ssr': ANGULAR,
        '@angular/build': ANGULAR,
        '@angular/cli': ANGULAR,
        '@angular/compiler-cli': ANGULAR,
      },
      why:
        "ng new writes ^21.2.0 for the framework's packages; this registry's newest @angular/common (21.2.26) " +
        'has no @angular/platform-server of its version (21.2.24 is the newest), so npm fails with ERESOLVE. ' +
        'Every @angular/* package is pinned to 21.2.24, the newest they all have.',
    },
    offlineEdits: [],
    buildEnv: {},
    serverEntry: 'dist/app/server/server.mjs (Express, every dependency bundled in)',
    start: { command: ['node', 'dist/app/server/server.mjs'], portEnv: ['PORT'], hostEnv: [] },
    staticDirs: [{ dir: 'dist/app/browser', urlPrefix: '/' }],
    needsNodeModules: false,
    node20: 'Angular 21 needs node ^20.19; Angular 22 needs 22.',
    seconds: { generate: 90, npmCi: 60, build: 100, firstResponse: 0.3 },
  },
};

function astroFiles(name: string, extraDeps: Record<string, string>, config: string): Record<string, string> {
  const pkg = {
    name,
    type: 'module',
    version: '0.0.1',
    scripts: { dev: 'astro dev', build: 'astro build', preview: 'astro preview', astro: 'astro' },
    dependencies: { astro: '5.18.2', ...extraDeps },
  };
  const dynamic = name === 'astro-node' ? '\n\t\t<p>Rendered at {new Date().toISOString()}</p>' : '';
  return {
    'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
    'astro.config.mjs': config,
    'tsconfig.json':
      '{\n  "extends": "astro/tsconfigs/strict",\n  "include": [".astro/types.d.ts", "**/*"],\n  "exclude": ["dist"]\n}\n',
    'src/pages/index.astro':
      '---\n\n---\n\n<html lang="en">\n\t<head>\n\t\t<meta charset="utf-8" />\n\t\t<link rel="icon" type="image/svg+xml" href="/favicon.svg" />\n' +
      '\t\t<meta name="viewport" content="width=device-width" />\n\t\t<meta name="generator" content={Astro.generator} />\n' +
      `\t\t<title>Astro</title>\n\t</head>\n\t<body>\n\t\t<h1>Astro</h1>${dynamic}\n\t</body>\n</html>\n`,
    'public/favicon.svg':
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 128 128"><circle cx="64" cy="64" r="60"/></svg>\n',
    '.gitignore': 'dist/\n.astro/\nnode_modules/\nnpm-debug.log*\n.env\n.env.production\n.DS_Store\n',
  };
}

function reactRouterFiles(): Record<string, string> {
  const pkg = {
    name: 'react-router-app',
    private: true,
    type: 'module',
    scripts: {
      build: 'react-router build',
      dev: 'react-router dev',
      start: 'react-router-serve ./build/server/index.js',
      typecheck: 'react-router typegen && tsc',
    },
    dependencies: {
      '@react-router/node': '7.18.4',
      '@react-router/serve': '7.18.4',
      isbot: '^5.1.31',
      react: '^19.2.0',
      'react-dom': '^19.2.0',
      'react-router': '7.18.4',
    },
    devDependencies: {
      '@react-router/dev': '7.18.4',
      '@types/node': '^20',
      '@types/react': '^19.2.0',
      '@types/react-dom': '^19.2.0',
      typescript: '^5.9.0',
      vite: '^7.1.0',
    },
  };
  return {
    'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
    'react-router.config.ts':
      'import type { Config } from "@react-router/dev/config";\n\nexport default {\n  ssr: true,\n} satisfies Config;\n',
    'vite.config.ts':
      'import { reactRouter } from "@react-router/dev/vite";\nimport { defineConfig } from "vite";\n\nexport default defineConfig({\n  plugins: [reactRouter()],\n});\n',
    'app/root.tsx': [
      'import { Links, Meta, Outlet, Scripts, ScrollRestoration } from "react-router";',
      '',
      'export function Layout({ children }: { children: React.ReactNode }) {',
      '  return (',
      '    <html lang="en">',
      '      <head>',
      '        <meta charSet="utf-8" />',
      '        <meta name="viewport" content="width=device-width, initial-scale=1" />',
      '        <Meta />',
      '        <Links />',
      '      </head>',
      '      <body>',
      '        {children}',
      '        <ScrollRestoration />',
      '        <Scripts />',
      '      </body>',
      '    </html>',
      '  );',
      '}',
      '',
      'export default function App() {',
      '  return <Outlet />;',
      '}',
      '',
    ].join('\n'),
    'app/routes.ts':
      'import { type RouteConfig, index } from "@react-router/dev/routes";\n\nexport default [index("routes/home.tsx")] satisfies RouteConfig;\n',
    'app/routes/home.tsx': [
      'export function meta() {',
      '  return [{ title: "New React Router App" }];',
      '}',
      '',
      'export function loader() {',
      '  return { renderedAt: new Date().toISOString() };',
      '}',
      '',
      'export default function Home({ loaderData }: { loaderData: { renderedAt: string } }) {',
      '  return <h1>Welcome to React Router (rendered at {loaderData.renderedAt})</h1>;',
      '}',
      '',
    ].join('\n'),
    'tsconfig.json': `${JSON.stringify(
      {
        include: ['**/*', '**/.server/**/*', '**/.client/**/*', '.react-router/types/**/*'],
        compilerOptions: {
          lib: ['DOM', 'DOM.Iterable', 'ES2022'],
          types: ['node', 'vite/client'],
          target: 'ES2022',
          module: 'ES2022',
          moduleResolution: 'bundler',
          jsx: 'react-jsx',
          rootDirs: ['.', './.react-router/types'],
          esModuleInterop: true,
          verbatimModuleSyntax: true,
          noEmit: true,
          resolveJsonModule: true,
          skipLibCheck: true,
          strict: true,
        },
      },
      null,
      2,
    )}\n`,
    'public/favicon.svg':
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16"/></svg>\n',
    '.gitignore': '.DS_Store\n.env\n/node_modules/\n/.react-router/\n/build/\n',
  };
}

/** Bump when the way starters are made changes without any fact above changing. */
const RECIPE_VERSION = 1;
const COMMAND_TIMEOUT_MS = 10 * 60_000;

/** The cache folder: `$SLIPWAY_STARTERS_DIR`, else `os.tmpdir()/slipway-starters`. */
export const startersDir = (): string =>
  process.env.SLIPWAY_STARTERS_DIR ?? join(tmpdir(), 'slipway-starters');

/** The hash that names a starter's cached folder. */
export function starterKey(name: StarterName): string {
  const facts = STARTERS[name];
  const input = JSON.stringify([
    RECIPE_VERSION,
    process.versions.node.split('.')[0],
    facts.generator,
    facts.pin ?? null,
    facts.offlineEdits,
  ]);
  return createHash('sha256').update(input).digest('hex').slice(0, 12);
}

const pending = new Map<StarterName, Promise<string>>();

/**
 * The path of a git repository holding `name`'s starter, generated on first use on this machine
 * (minutes: npm installs the whole dependency tree once to write the lockfile). Its working tree has
 * only the committed files. Generator output goes to a log; on failure the error names the log.
 */
export function starter(name: StarterName): Promise<string> {
  let promise = pending.get(name);
  if (!promise) {
    promise = makeStarter(name);
    pending.set(name, promise);
    promise.catch(() => pending.delete(name));
  }
  return promise;
}

async function makeStarter(name: StarterName): Promise<string> {
  const facts = STARTERS[name];
  const root = startersDir();
  const final = join(root, `${name}-${starterKey(name)}`);
  if (existsSync(join(final, '.git'))) return final;

  await mkdir(root, { recursive: true, mode: 0o755 });
  const work = await mkdtemp(join(root, `.tmp-${name}-`));
  const logPath = join(work, 'generate.log');
  const project = join(work, 'app');
  // The generators' own preferences and npm settings of a surrounding `npm test` must not leak in.
  const home = join(work, 'home');
  await mkdir(home);
  const env = generatorEnv(home);
  try {
    if (facts.generator.kind === 'npx') {
      const args = facts.generator.args.map((arg) => (arg === '{dir}' ? 'app' : arg));
      await run('npx', ['-y', ...args], work, env, logPath);
      if (facts.pin) {
        await pinVersions(project, facts.pin.versions);
        await run('npm', ['install', '--no-audit', '--no-fund'], project, env, logPath);
      }
    } else {
      await writeFiles(project, facts.generator.files);
      await run('npm', ['install', '--no-audit', '--no-fund'], project, env, logPath);
    }
    for (const edit of facts.offlineEdits) await applyEdit(project, edit);
    if (!existsSync(join(project, 'package-lock.json')))
      throw new Error('the generator made no package-lock.json');

    const git = (...args: string[]) => run('git', args, project, { ...env, ...GIT_ENV }, logPath);
    await git('init', '-q', '-b', 'main');
    await git('add', '-A');
    await git('commit', '-q', '-m', `${facts.framework} starter`);
    // node_modules and the generator's build output are ignored: keep only what a clone gets.
    await git('clean', '-fdxq');
    await chmod(project, 0o755);

    try {
      await rename(project, final);
    } catch (err) {
      // Another process made it first: its copy is as good as ours.
      const code = (err as NodeJS.ErrnoException).code;
      if (!(code === 'ENOTEMPTY' || code === 'EEXIST') || !existsSync(join(final, '.git'))) throw err;
    }
    return final;
  } catch (err) {
    const kept = join(root, `${name}-${starterKey(name)}.error.log`);
    await cp(logPath, kept).catch(() => writeFile(kept, ''));
    const tail = (await readFile(kept, 'utf8').catch(() => '')).split('\n').slice(-30).join('\n');
    throw new Error(`starter(${name}) failed: ${(err as Error).message}\nlog: ${kept}\n${tail}`, {
      cause: err,
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Starter Generator',
  GIT_AUTHOR_EMAIL: 'starters@example.com',
  GIT_COMMITTER_NAME: 'Starter Generator',
  GIT_COMMITTER_EMAIL: 'starters@example.com',
};

/** The environment generators run with (shared npm cache, no telemetry, no saved preferences). */
export function generatorEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== 'INIT_CWD' && key !== 'NODE_OPTIONS') env[key] = value;
  }
  return {
    ...env,
    // create-next-app's saved preferences live under XDG_CONFIG_HOME; `--yes` would reuse them.
    XDG_CONFIG_HOME: join(home, '.config'),
    // Keep npm's cache (and npx's packages) shared between runs.
    npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? tmpdir(), '.npm'),
    npm_config_update_notifier: 'false',
    npm_config_yes: 'true',
    CI: '1',
    NEXT_TELEMETRY_DISABLED: '1',
    NUXT_TELEMETRY_DISABLED: '1',
    ASTRO_TELEMETRY_DISABLED: '1',
    NG_CLI_ANALYTICS: 'false',
    NO_COLOR: '1',
  };
}

async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

/** Writes exact versions over the generated package.json's ranges (dependencies and devDependencies). */
async function pinVersions(dir: string, versions: Record<string, string>): Promise<void> {
  const path = join(dir, 'package.json');
  const pkg = JSON.parse(await readFile(path, 'utf8')) as Record<string, Record<string, string> | undefined>;
  for (const [name, version] of Object.entries(versions)) {
    for (const field of ['dependencies', 'devDependencies']) {
      const deps = pkg[field];
      if (deps && name in deps) deps[name] = version;
    }
  }
  await writeFile(path, `${JSON.stringify(pkg, null, 2)}\n`);
}

async function applyEdit(dir: string, edit: OfflineEdit): Promise<void> {
  const path = join(dir, edit.file);
  const text = await readFile(path, 'utf8');
  if (!text.includes(edit.find))
    throw new Error(`offline edit: ${edit.file} no longer contains ${JSON.stringify(edit.find)}`);
  await writeFile(path, text.replace(edit.find, edit.replace));
}

/** Runs a command with its output appended to `logPath`; rejects on a non-zero exit or timeout. */
function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  logPath: string,
): Promise<void> {
  mkdirSync(dirname(logPath), { recursive: true });
  writeFileSync(logPath, `\n$ (${cwd}) ${command} ${args.join(' ')}\n`, { flag: 'a' });
  const fd = openSync(logPath, 'a');
  return new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', fd, fd], detached: true });
    const timer = setTimeout(() => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      reject(new Error(`${command} ${args.join(' ')} timed out after ${COMMAND_TIMEOUT_MS / 1000}s`));
    }, COMMAND_TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code ?? signal}`));
    });
  }).finally(() => closeSync(fd));
}

/** The log of the last failed generation of `name`, if any (for a test's failure message). */
export function starterErrorLog(name: StarterName): string | null {
  const path = join(startersDir(), `${name}-${starterKey(name)}.error.log`);
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}
