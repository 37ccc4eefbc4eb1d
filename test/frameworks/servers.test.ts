import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../api/schemas/deployments.ts';
import type { StarterName } from '../helpers/starters.ts';
import type { Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';
import {
  deployWithoutSettings,
  edgeAsset,
  FRAMEWORK_ENV,
  perRequest,
  starterWith,
  startStack,
  timedChunks,
} from './deploy-starter.ts';

/**
 * SvelteKit (sv create, adapter-auto), Nuxt, Astro (static, and with @astrojs/node) deployed
 * with no settings, each with a page of the test's own that computes a value per request, so a
 * static export cannot pass. The starters are their generators' (or, where a generator
 * downloads its template from GitHub, the smallest project of the framework's docs: see
 * test/helpers/starters.ts).
 */
const APPS: Record<string, { starter: StarterName; files: Record<string, string> }> = {
  sveltekit: {
    starter: 'sveltekit',
    files: {
      'src/routes/now/+page.server.ts':
        'export const load = () => ({ now: `rendered-${Date.now()}-${Math.random()}` });\n',
      'src/routes/now/+page.svelte':
        '<script lang="ts">\n  let { data } = $props();\n</script>\n\n<p id="now">{data.now}</p>\n',
    },
  },
  nuxt: {
    starter: 'nuxt',
    files: {
      'server/api/now.ts':
        'export default defineEventHandler(() => ({ now: `rendered-${Date.now()}-${Math.random()}` }))\n',
    },
  },
  astro: { starter: 'astro', files: { 'src/pages/about.astro': '<h1 id="about">About, built once</h1>\n' } },
  // Its template's home route has a loader that renders the time of the request.
  'react-router': { starter: 'react-router', files: {} },
  'astro-node': {
    starter: 'astro-node',
    files: { 'src/pages/now.astro': '<p id="now">{`rendered-${Date.now()}-${Math.random()}`}</p>\n' },
  },
};

describe('server frameworks, deployed with no settings', { timeout: 600_000 }, () => {
  let s: Stack;
  const repos: { remove(): void }[] = [];
  const deployed: Record<string, { d: Deployment; log: string }> = {};

  beforeAll(async () => {
    s = await startStack({ env: FRAMEWORK_ENV });
    await Promise.all(
      Object.entries(APPS).map(async ([name, app]) => {
        const repo = await starterWith(app.starter, app.files);
        repos.push(repo);
        const { deployment, log } = await deployWithoutSettings(s, name, repo.url);
        deployed[name] = { d: deployment, log };
      }),
    );
  }, 600_000);
  afterAll(async () => {
    await s?.stop();
    for (const repo of repos) repo.remove();
    // The stop gives running jobs SLIPWAY_SHUTDOWN_GRACE (10 s) and stops five apps: more than
    // the default 30 s on a loaded machine.
  }, 120_000);

  const live = (name: string) => {
    const { d, log } = deployed[name]!;
    expect({ status: d.status, error: d.errorMessage }, log.slice(-4000)).toEqual({
      status: 'live',
      error: null,
    });
    return { d, log, get: (path: string) => timedChunks(s, d.url, path) };
  };
  it('SvelteKit with adapter-auto runs as a Node.js server: server load per request, assets from the edge', async () => {
    const { log, get } = live('sveltekit');
    expect(log).toContain('SvelteKit with adapter-auto: building for a Node.js server');
    expect(log).toContain('==> Storing the SvelteKit server (adapter-node)');
    const home = await get('/');
    expect(home.status).toBe(200);
    expect(home.body.toString()).toContain('Welcome to SvelteKit');
    await perRequest(get, '/now');
    await edgeAsset(get, home.body.toString(), '/_app/immutable/');
  });

  it('Nuxt runs its Nitro server: a server route per request, the page rendered, assets from the edge', async () => {
    const { log, get } = live('nuxt');
    expect(log).toContain('==> Storing the Nuxt server (Nitro, node-server preset)');
    expect(JSON.parse((await get('/api/hello')).body.toString())).toEqual({ hello: 'world' });
    await perRequest(get, '/api/now');
    const home = await get('/');
    expect(home.status).toBe(200);
    expect(home.body.toString()).toContain('<div id="__nuxt">');
    await edgeAsset(get, home.body.toString(), '/_nuxt/');
    expect((await get('/robots.txt')).body.toString()).toContain('User-Agent: *');
  });

  it('Astro without an adapter stays a static site', async () => {
    const { d, log, get } = live('astro');
    expect(log).toContain('==> Storing build output from dist');
    expect((await get('/about')).body.toString()).toContain('About, built once');
    expect(d.framework).toBe('astro');
  });

  it('React Router 7 runs its server with react-router-serve, its node_modules/.bin link kept', async () => {
    const { log, get } = live('react-router');
    expect(log).toContain('==> Storing the app');
    // React separates the text's parts with `<!-- -->`.
    const value = async () =>
      /rendered at (?:<!-- -->)?(\d{4}-[^<]+)</.exec((await get('/')).body.toString())?.[1];
    const a = await value();
    expect(a).toMatch(/^\d{4}-\d\d-\d\dT/);
    // Each request renders its own time: a later one says a later millisecond.
    const b = await waitFor('a later rendering', async () => {
      const v = await value();
      return v && v !== a ? v : null;
    });
    expect(Date.parse(b)).toBeGreaterThan(Date.parse(a!));
  });

  it('Astro with @astrojs/node runs its server: a page per request', async () => {
    const { log, get } = live('astro-node');
    expect(log).toContain('==> Storing the Astro server (@astrojs/node)');
    await perRequest(get, '/now');
  });
});
