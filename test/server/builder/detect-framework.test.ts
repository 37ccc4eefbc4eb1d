import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { angularOutput } from '../../../server/features/builds/angular-output.ts';
import { BuildError } from '../../../server/platform/sandbox/build-error.ts';
import {
  detectFramework,
  supportedFrameworkSlugs,
} from '../../../server/features/builds/detect-framework.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A repository working tree holding `files`; objects are written as JSON. */
function repo(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-detect-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}

const pkg = (body: {
  deps?: string[];
  devDeps?: string[];
  scripts?: Record<string, string>;
  packageManager?: string;
}) => ({
  name: 'app',
  ...(body.deps ? { dependencies: Object.fromEntries(body.deps.map((d) => [d, '^1.0.0'])) } : {}),
  ...(body.devDeps ? { devDependencies: Object.fromEntries(body.devDeps.map((d) => [d, '^1.0.0'])) } : {}),
  ...(body.scripts ? { scripts: body.scripts } : {}),
  ...(body.packageManager ? { packageManager: body.packageManager } : {}),
});

const pick = (fw: Awaited<ReturnType<typeof detectFramework>>) =>
  fw && {
    slug: fw.slug,
    buildCommand: fw.buildCommand,
    outputDirectory: fw.outputDirectory,
    spa: fw.spa,
    kind: fw.kind,
  };

describe('detectFramework: one rule per framework', () => {
  const cases: [string, Record<string, unknown>, ReturnType<typeof pick>][] = [
    [
      'Next.js as a static export, with its own build script',
      {
        'package.json': pkg({
          deps: ['next', 'react', 'react-dom'],
          scripts: { build: 'next build', start: 'next start' },
        }),
      },
      { slug: 'nextjs', buildCommand: 'npm run build', outputDirectory: 'out', spa: false, kind: 'static' },
    ],
    [
      'Next.js without a build script',
      { 'package.json': pkg({ deps: ['next', 'react'] }) },
      { slug: 'nextjs', buildCommand: 'next build', outputDirectory: 'out', spa: false, kind: 'static' },
    ],
    [
      'Vite (a single-page app)',
      { 'package.json': pkg({ devDeps: ['vite'], scripts: { build: 'vite build' } }) },
      { slug: 'vite', buildCommand: 'npm run build', outputDirectory: 'dist', spa: true, kind: 'static' },
    ],
    [
      'Astro',
      { 'package.json': pkg({ deps: ['astro'] }) },
      { slug: 'astro', buildCommand: 'astro build', outputDirectory: 'dist', spa: false, kind: 'static' },
    ],
    [
      'SvelteKit with the static adapter',
      {
        'package.json': pkg({
          devDeps: ['@sveltejs/kit', '@sveltejs/adapter-static', 'vite'],
          scripts: { build: 'vite build' },
        }),
      },
      {
        slug: 'sveltekit-1',
        buildCommand: 'npm run build',
        outputDirectory: 'build',
        spa: false,
        kind: 'static',
      },
    ],
    [
      'Nuxt, built with its build script (a server; its generate script only where the project asks)',
      {
        'package.json': pkg({ deps: ['nuxt'], scripts: { build: 'nuxt build', generate: 'nuxt generate' } }),
      },
      {
        slug: 'nuxtjs',
        buildCommand: 'npm run build',
        outputDirectory: '.output/public',
        spa: false,
        kind: 'static',
      },
    ],
    [
      'Nuxt without a build script',
      { 'package.json': pkg({ deps: ['nuxt'], scripts: {} }) },
      {
        slug: 'nuxtjs',
        buildCommand: 'nuxt build',
        outputDirectory: '.output/public',
        spa: false,
        kind: 'static',
      },
    ],
    [
      'Gatsby',
      { 'package.json': pkg({ deps: ['gatsby', 'react'] }) },
      { slug: 'gatsby', buildCommand: 'gatsby build', outputDirectory: 'public', spa: false, kind: 'static' },
    ],
    [
      'Create React App (a single-page app)',
      {
        'package.json': pkg({ deps: ['react', 'react-scripts'], scripts: { build: 'react-scripts build' } }),
      },
      {
        slug: 'create-react-app',
        buildCommand: 'npm run build',
        outputDirectory: 'build',
        spa: true,
        kind: 'static',
      },
    ],
    [
      'Docusaurus',
      { 'package.json': pkg({ deps: ['@docusaurus/core', 'react'] }) },
      {
        slug: 'docusaurus-2',
        buildCommand: 'docusaurus build',
        outputDirectory: 'build',
        spa: false,
        kind: 'static',
      },
    ],
    [
      'Eleventy',
      { 'package.json': pkg({ devDeps: ['@11ty/eleventy'], scripts: { build: 'eleventy' } }) },
      {
        slug: 'eleventy',
        buildCommand: 'npm run build',
        outputDirectory: '_site',
        spa: false,
        kind: 'static',
      },
    ],
    [
      'Vue CLI (a single-page app)',
      { 'package.json': pkg({ deps: ['vue'], devDeps: ['@vue/cli-service'] }) },
      {
        slug: 'vue',
        buildCommand: 'vue-cli-service build',
        outputDirectory: 'dist',
        spa: true,
        kind: 'static',
      },
    ],
    [
      'a plain static site',
      { 'index.html': '<h1>hi</h1>' },
      { slug: 'static', buildCommand: null, outputDirectory: '.', spa: false, kind: 'static' },
    ],
    [
      'a build script and no known framework',
      { 'package.json': pkg({ scripts: { build: 'node build.mjs' } }) },
      { slug: 'static', buildCommand: 'npm run build', outputDirectory: 'dist', spa: false, kind: 'static' },
    ],
    [
      'a Node.js server (start script, no framework)',
      { 'package.json': pkg({ deps: ['pg'], scripts: { start: 'node index.js', build: 'tsc' } }) },
      { slug: 'node', buildCommand: 'npm run build', outputDirectory: '.', spa: false, kind: 'node' },
    ],
    [
      'an Express server (a server framework of the list)',
      {
        'package.json': pkg({ deps: ['express'], scripts: { start: 'node server.js' } }),
        'server.js': "const express = require('express');\n",
      },
      { slug: 'express', buildCommand: null, outputDirectory: '.', spa: false, kind: 'node' },
    ],
  ];

  it.each(cases)('%s', async (_name, files, expected) => {
    expect(pick(await detectFramework(repo(files)))).toEqual(expected);
  });

  it('gives a Node.js server its start script, or its server.js', async () => {
    const withScript = await detectFramework(
      repo({ 'package.json': pkg({ scripts: { start: 'node app.js' } }) }),
    );
    expect(withScript?.startCommand).toBe('npm run start');
    const withEntry = await detectFramework(repo({ 'server.mjs': 'console.log(1)' }));
    expect(withEntry).toMatchObject({
      slug: 'node',
      kind: 'node',
      startCommand: 'node server.mjs',
      buildCommand: null,
    });
  });

  it('builds SolidStart and TanStack Start with their own command when there is no build script', async () => {
    const solid = await detectFramework(
      repo({ 'package.json': pkg({ deps: ['solid-js', '@solidjs/start'] }) }),
    );
    expect(solid).toMatchObject({ slug: 'solidstart-1', kind: 'node', buildCommand: 'vinxi build' });
    const tanstack = await detectFramework(
      repo({ 'package.json': pkg({ deps: ['@tanstack/react-start'] }) }),
    );
    expect(tanstack).toMatchObject({ slug: 'tanstack-start', kind: 'node', buildCommand: 'vite build' });
  });

  it('leaves the start command empty for a server framework with no way to start it', async () => {
    const fw = await detectFramework(repo({ 'package.json': pkg({ deps: ['@remix-run/dev'] }) }));
    expect(fw).toMatchObject({ slug: 'remix', kind: 'node', startCommand: null });
  });

  it('falls back from a build script to the usual output directories', async () => {
    const fw = await detectFramework(repo({ 'package.json': pkg({ scripts: { build: 'x' } }) }));
    expect(fw?.outputFallbacks).toEqual(['build', 'out', 'public', '_site', '.']);
  });

  it('returns null when nothing says how to build', async () => {
    expect(await detectFramework(repo({ 'README.md': '# hi' }))).toBeNull();
    expect(await detectFramework(repo({ 'package.json': pkg({ deps: ['lodash'] }) }))).toBeNull();
  });

  it('rejects a package.json that is not JSON', async () => {
    await expect(detectFramework(repo({ 'package.json': '{ nope' }))).rejects.toThrow(BuildError);
    await expect(detectFramework(repo({ 'package.json': '{ nope' }))).rejects.toThrow(
      /package.json is not valid JSON/,
    );
  });
});

describe('detectFramework: precedence', () => {
  const cases: [string, string[], string][] = [
    ['Next.js before Create React App', ['next', 'react-scripts', 'react'], 'nextjs'],
    ['Nuxt before Vite', ['nuxt', 'vite'], 'nuxtjs'],
    ['Astro before Vite', ['astro', 'vite'], 'astro'],
    ['SvelteKit before Vite', ['@sveltejs/kit', 'vite'], 'sveltekit-1'],
    ['Vue CLI before Vite', ['@vue/cli-service', 'vite'], 'vue'],
    ['Ionic Angular before Angular', ['@ionic/angular', '@angular/cli'], 'ionic-angular'],
    ['Gatsby before Create React App', ['gatsby', 'react-scripts'], 'gatsby'],
    ['Docusaurus before Create React App', ['@docusaurus/core', 'react-scripts'], 'docusaurus-2'],
    ['Vite before Storybook', ['vite', 'storybook'], 'vite'],
    // Without @tanstack/router-plugin, which @vercel/frameworks asks for: TanStack Start's own guide.
    ['TanStack Start before Vite', ['@tanstack/react-start', 'vite'], 'tanstack-start'],
    ['TanStack Start (Solid) before Vite', ['@tanstack/solid-start', 'vite'], 'tanstack-start'],
    ['SolidStart 1 before Vite', ['@solidjs/start', 'solid-js', 'vite'], 'solidstart-1'],
  ];
  it.each(cases)('%s', async (_name, deps, slug) => {
    expect(
      (await detectFramework(repo({ 'package.json': pkg({ devDeps: deps, scripts: { start: 'x' } }) })))
        ?.slug,
    ).toBe(slug);
  });

  it('prefers a framework to a start script, and a start script to index.html', async () => {
    const node = await detectFramework(
      repo({ 'index.html': 'x', 'package.json': pkg({ scripts: { start: 'serve' } }) }),
    );
    expect(node?.slug).toBe('node');
  });
});

describe('detectFramework: Angular output directory from angular.json', () => {
  const angular = (build: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    repo({
      'package.json': pkg({
        deps: ['@angular/core'],
        devDeps: ['@angular/cli'],
        scripts: { build: 'ng build' },
      }),
      'angular.json': {
        version: 1,
        ...extra,
        projects: { shop: { projectType: 'application', architect: { build } } },
      },
    });

  it('reads outputPath with the browser builder', async () => {
    const fw = await detectFramework(
      angular({ builder: '@angular-devkit/build-angular:browser', options: { outputPath: 'dist/shop' } }),
    );
    expect(pick(fw)).toEqual({
      slug: 'angular',
      buildCommand: 'npm run build',
      outputDirectory: 'dist/shop',
      spa: true,
      kind: 'static',
    });
  });

  it('adds /browser for the application builder', async () => {
    const fw = await detectFramework(
      angular({ builder: '@angular/build:application', options: { outputPath: 'dist/shop' } }),
    );
    expect(fw?.outputDirectory).toBe('dist/shop/browser');
  });

  it('reads an outputPath object', async () => {
    const fw = await detectFramework(
      angular({
        builder: '@angular/build:application',
        options: { outputPath: { base: 'public-out', browser: '' } },
      }),
    );
    expect(fw?.outputDirectory).toBe('public-out');
  });

  it('defaults to dist/<project>/browser without outputPath', async () => {
    const fw = await detectFramework(angular({ builder: '@angular-devkit/build-angular:application' }));
    expect(fw?.outputDirectory).toBe('dist/shop/browser');
  });

  it('finds the server folder of an SSR build beside the browser one', async () => {
    const dir = angular({
      builder: '@angular/build:application',
      options: { outputPath: { base: 'out/shop', server: 'node' }, ssr: { entry: 'src/server.ts' } },
    });
    expect(await angularOutput(dir)).toEqual({
      base: 'out/shop',
      browser: 'out/shop/browser',
      server: 'out/shop/node',
    });
    const older = angular({ builder: '@angular-devkit/build-angular:browser' });
    expect(await angularOutput(older)).toEqual({ base: 'dist/shop', browser: 'dist/shop', server: null });
  });

  it('defaults to dist without angular.json', async () => {
    const fw = await detectFramework(repo({ 'package.json': pkg({ devDeps: ['@angular/cli'] }) }));
    expect(fw).toMatchObject({ slug: 'angular', outputDirectory: 'dist', buildCommand: 'ng build' });
  });
});

describe('detectFramework: package manager and the project setting', () => {
  it('runs the build script with the package manager of the lockfile', async () => {
    const scripts = { build: 'vite build' };
    const pnpm = await detectFramework(
      repo({ 'package.json': pkg({ devDeps: ['vite'], scripts }), 'pnpm-lock.yaml': '' }),
    );
    expect(pnpm?.buildCommand).toBe('pnpm run build');
    expect(pnpm?.packageManager.install).toEqual(['pnpm', 'install', '--frozen-lockfile']);
    const yarn = await detectFramework(
      repo({ 'package.json': pkg({ devDeps: ['vite'], scripts }), 'yarn.lock': '' }),
    );
    expect(yarn?.buildCommand).toBe('yarn run build');
  });

  it("uses the project's framework instead of detecting one", async () => {
    const dir = repo({
      'package.json': pkg({ devDeps: ['vite'], scripts: { build: 'vite build' } }),
      'index.html': 'x',
    });
    expect(await detectFramework(dir, { framework: 'create-react-app' })).toMatchObject({
      slug: 'create-react-app',
      outputDirectory: 'build',
      source: 'configured',
    });
    expect((await detectFramework(dir))?.source).toBe('detected');
  });

  it('rejects a framework it cannot build, listing those it can', async () => {
    const dir = repo({ 'index.html': 'x' });
    await expect(detectFramework(dir, { framework: 'hugo' })).rejects.toThrow(
      /"hugo" is not one Slipway can build.*vite/,
    );
    expect(supportedFrameworkSlugs()).toEqual(
      expect.arrayContaining(['nextjs', 'vite', 'static', 'node', 'angular']),
    );
    expect(supportedFrameworkSlugs()).not.toContain('hugo');
  });
});

describe('detectFramework: agrees with the edge on single-page apps', () => {
  it('marks as SPA exactly the frameworks the edge serves as SPAs', async () => {
    const { SPA_FRAMEWORKS } = await import('../../../server/features/serving/edge/spa-frameworks.ts');
    const dir = repo({ 'index.html': 'x' });
    for (const slug of supportedFrameworkSlugs()) {
      const fw = await detectFramework(dir, { framework: slug });
      expect([slug, fw?.spa]).toEqual([slug, SPA_FRAMEWORKS.includes(slug)]);
    }
  });
});
