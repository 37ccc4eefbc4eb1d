import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { starter, type StarterName } from '../helpers/starters.ts';
import type { Stack } from '../helpers/stack.ts';
import {
  deployWithoutSettings,
  edgeAsset,
  FRAMEWORK_ENV,
  perRequest,
  starterWith,
  startStack,
  timedChunks,
} from './deploy-starter.ts';

const NOW = 'rendered-${Date.now()}-${Math.random()}';

/** The Angular starter's own server.ts with an Express route where its comment shows one. */
async function angularServerWithApi(): Promise<string> {
  const generated = readFileSync(join(await starter('angular'), 'src/server.ts'), 'utf8');
  const anchor = '/**\n * Serve static files from /browser\n */';
  expect(generated).toContain(anchor);
  return generated.replace(
    anchor,
    `app.get('/api/now', (req, res) => {\n  res.json({ now: \`${NOW}\` });\n});\n\n${anchor}`,
  );
}

/**
 * SolidStart, TanStack Start and Angular with server rendering, deployed with no settings, each
 * with pages of the test's own: a page and a server route that compute a value per request (so a
 * static export cannot pass), beside the starter's static assets, which the edge answers itself.
 *
 * The starters (test/helpers/starters.ts): Angular's is `ng new --ssr` from the npm registry
 * (its @angular/* versions pinned to ones the registry has together). SolidStart's generator
 * (create-solid) downloads its templates from GitHub, and TanStack Start's (create-start-app)
 * installs releases that need Node 22, so those two are the smallest projects of the frameworks'
 * own docs: SolidStart's `basic` template, TanStack Start's "Build a Project from Scratch" guide.
 */
const APPS: Record<string, { starter: StarterName; files: () => Promise<Record<string, string>> }> = {
  solidstart: {
    starter: 'solidstart',
    files: async () => ({
      'src/routes/now.tsx': `export default function Now() {\n  return <p id="now">{\`${NOW}\`}</p>;\n}\n`,
      'src/routes/api/now.ts': `export function GET() {\n  return Response.json({ now: \`${NOW}\` });\n}\n`,
    }),
  },
  'tanstack-start': {
    starter: 'tanstack-start',
    files: async () => ({
      'src/routes/now.tsx':
        "import { createFileRoute } from '@tanstack/react-router'\n\n" +
        "export const Route = createFileRoute('/now')({\n" +
        `  loader: () => ({ now: \`${NOW}\` }),\n` +
        '  component: () => <p id="now">{Route.useLoaderData().now}</p>,\n})\n',
      'src/routes/api/now.ts':
        "import { createServerFileRoute } from '@tanstack/react-start/server'\n\n" +
        "export const ServerRoute = createServerFileRoute('/api/now').methods({\n" +
        `  GET: () => Response.json({ now: \`${NOW}\` }),\n})\n`,
    }),
  },
  angular: {
    starter: 'angular',
    files: async () => ({
      'src/app/now.ts':
        "import { Component } from '@angular/core';\n\n" +
        "@Component({ selector: 'app-now', template: '<p id=\"now\">{{ now }}</p>' })\n" +
        `export class Now {\n  protected readonly now = \`${NOW}\`;\n}\n`,
      'src/app/app.routes.ts':
        "import { Routes } from '@angular/router';\nimport { Now } from './now';\n\n" +
        // The starter's home page stays (its routes were empty: the home page is the app's root).
        "export const routes: Routes = [\n  { path: '', pathMatch: 'full', children: [] },\n  { path: 'now', component: Now },\n];\n",
      // The starter prerenders every route; this one is rendered on the server for each request.
      'src/app/app.routes.server.ts':
        "import { RenderMode, ServerRoute } from '@angular/ssr';\n\n" +
        'export const serverRoutes: ServerRoute[] = [\n' +
        "  { path: 'now', renderMode: RenderMode.Server },\n" +
        "  { path: '**', renderMode: RenderMode.Prerender },\n];\n",
      'src/server.ts': await angularServerWithApi(),
    }),
  },
};

describe(
  'SolidStart, TanStack Start and Angular SSR, deployed with no settings',
  { timeout: 900_000 },
  () => {
    let s: Stack;
    const repos: { remove(): void }[] = [];
    const deployed: Record<string, { d: Deployment; log: string }> = {};

    beforeAll(async () => {
      // A build's job goes on after its deployment is live, saving the build cache (hundreds of MB
      // of node_modules on a loaded machine): the stop waits for it, rather than remove its
      // workspace while it is still mounted (EBUSY).
      s = await startStack({ env: { ...FRAMEWORK_ENV, SLIPWAY_SHUTDOWN_GRACE: '3m' } });
      await Promise.all(
        Object.entries(APPS).map(async ([name, app]) => {
          const repo = await starterWith(app.starter, await app.files());
          repos.push(repo);
          const { deployment, log } = await deployWithoutSettings(s, name, repo.url);
          deployed[name] = { d: deployment, log };
        }),
      );
    }, 900_000);
    afterAll(async () => {
      await s?.stop();
      for (const repo of repos) repo.remove();
    }, 240_000);

    const live = (name: string) => {
      const { d, log } = deployed[name]!;
      expect({ status: d.status, error: d.errorMessage }, log.slice(-4000)).toEqual({
        status: 'live',
        error: null,
      });
      return { d, log, get: (path: string) => timedChunks(s, d.url, path) };
    };
    const json = async (res: ReturnType<typeof timedChunks>) => {
      const r = await res;
      expect(r.status).toBe(200);
      expect(String(r.headers['content-type'])).toContain('application/json');
      return JSON.parse(r.body.toString()) as { now: string };
    };

    it('SolidStart runs its Nitro server: a page and an API route per request, vinxi’s assets from the edge', async () => {
      const { d, log, get } = live('solidstart');
      expect(d.framework).toBe('solidstart-1');
      expect(log).toContain('==> Storing the SolidStart server (Nitro through vinxi, node-server preset)');
      const home = await get('/');
      expect(home.status).toBe(200);
      expect(home.body.toString()).toContain('Hello world!');
      await perRequest(get, '/now');
      const [a, b] = [await json(get('/api/now')), await json(get('/api/now'))];
      expect(a.now).not.toBe(b.now);
      await edgeAsset(get, home.body.toString(), '/_build/assets/');
    });

    it('TanStack Start runs its Nitro server: a loader and a server route per request, assets from the edge', async () => {
      const { d, log, get } = live('tanstack-start');
      expect(d.framework).toBe('tanstack-start');
      expect(log).toContain('==> Storing the TanStack Start server (Nitro, node-server preset)');
      const home = await get('/');
      expect(home.status).toBe(200);
      // The guide's home page: its loader calls a server function.
      expect(home.body.toString()).toMatch(/Hello from the server at (?:<!-- -->)?\d{4}-/);
      await perRequest(get, '/now');
      const [a, b] = [await json(get('/api/now')), await json(get('/api/now'))];
      expect(a.now).not.toBe(b.now);
      await edgeAsset(get, home.body.toString(), '/assets/');
    });

    it('Angular runs its @angular/ssr server: a route rendered per request, its Express API, bundles from the edge', async () => {
      const { d, log, get } = live('angular');
      expect(d.framework).toBe('angular');
      expect(log).toContain('==> Storing the Angular server (@angular/ssr)');
      // Prerendered at build time (the starter's `**` route), served by the edge as a file.
      const home = await get('/');
      expect(home.status).toBe(200);
      expect(home.body.toString()).toContain('Hello, app');
      // Rendered on the server (not the client-side fallback Angular serves to hosts it is not told of).
      const now = (await get('/now')).body.toString();
      expect(now).toMatch(/<p id="now">rendered-/);
      await perRequest(get, '/now');
      const [a, b] = [await json(get('/api/now')), await json(get('/api/now'))];
      expect(a.now).not.toBe(b.now);
      await edgeAsset(get, home.body.toString(), 'main-');
    });
  },
);
