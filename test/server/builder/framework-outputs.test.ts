import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { frameworkOutput } from '../../../server/features/builds/outputs/index.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

/** An app folder holding `files` (objects written as JSON), as its build left it. */
const app = (files: Record<string, unknown>): string =>
  tempDir(
    Object.fromEntries(
      Object.entries(files).map(([path, c]) => [path, typeof c === 'string' ? c : JSON.stringify(c)]),
    ),
  );

const serverOf = (slug: string, dir: string) =>
  frameworkOutput(slug)!.server({ src: dir, app: dir, dependencies: {} });

describe('framework outputs: what a build made decides the server', () => {
  it.each([
    ['solidstart-1', 'SolidStart server (Nitro through vinxi, node-server preset)'],
    ['tanstack-start', 'TanStack Start server (Nitro, node-server preset)'],
    ['nuxtjs', 'Nuxt server (Nitro, node-server preset)'],
  ])('%s: a Nitro server in .output, its public folder from the edge', async (slug, description) => {
    const dir = app({
      '.output/server/index.mjs': 'export {}',
      '.output/public/_build/assets/client-BOgxrNjj.js': '',
    });
    expect(await serverOf(slug, dir)).toEqual({
      root: join(dir, '.output'),
      startCommand: 'node server/index.mjs',
      assets: [{ dir: join(dir, '.output/public'), prefix: '/' }],
      writable: [],
      env: { HOST: '0.0.0.0' },
      description,
    });
    // A static preset (no server) is a static site.
    expect(await serverOf(slug, app({ '.output/public/index.html': '' }))).toBeNull();
  });

  const angularJson = (outputPath?: unknown) => ({
    projects: {
      shop: {
        projectType: 'application',
        architect: {
          build: {
            builder: '@angular/build:application',
            options: { ...(outputPath ? { outputPath } : {}), ssr: { entry: 'src/server.ts' } },
          },
        },
      },
    },
  });

  it('angular: server/server.mjs beside browser/, told to render for the hosts the edge sends', async () => {
    const dir = app({
      'angular.json': angularJson(),
      'dist/shop/server/server.mjs': 'export {}',
      'dist/shop/browser/main-B744OFW5.js': '',
    });
    const server = await serverOf('angular', dir);
    expect(server).toMatchObject({
      root: join(dir, 'dist/shop'),
      startCommand: 'node server/server.mjs',
      assets: [{ dir: join(dir, 'dist/shop/browser'), prefix: '/' }],
      description: 'Angular server (@angular/ssr)',
    });
    expect(server?.env).toEqual({
      NG_ALLOWED_HOSTS: '*',
      NG_TRUST_PROXY_HEADERS: 'x-forwarded-for,x-forwarded-host,x-forwarded-proto',
    });
  });

  it('angular: an outputPath object names the folders; no server.mjs is a static site', async () => {
    const dir = app({
      'angular.json': angularJson({ base: 'out', browser: 'public', server: 'node' }),
      'out/node/server.mjs': 'export {}',
      'out/public/index.html': '',
    });
    expect(await serverOf('angular', dir)).toMatchObject({
      root: join(dir, 'out'),
      startCommand: 'node node/server.mjs',
      assets: [{ dir: join(dir, 'out/public'), prefix: '/' }],
    });
    const staticSite = app({ 'angular.json': angularJson(), 'dist/shop/browser/index.html': '' });
    expect(await serverOf('angular', staticSite)).toBeNull();
  });
});
