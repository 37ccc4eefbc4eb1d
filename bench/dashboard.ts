import { gzipSync } from 'node:zlib';
import { createTestApp } from '../test/helpers/app.ts';
import { insertDeployment, insertProject } from '../test/helpers/edge.ts';
import { table } from './lib.ts';

const DEPLOYMENTS = 1000;
const ROUNDS = 300;

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;

/**
 * The dashboard's project page over a project of 1,000 deployments, beside the API's list of the
 * same page of deployments (the baseline) in the same run; and the bytes a first visit
 * transfers (the page, its one style sheet and one script, compressed as browsers ask for them).
 */
export async function benchDashboard(): Promise<string> {
  const t = await createTestApp({ env: { SLIPWAY_ENTERPRISE_RATE_LIMIT: '1000000' } });
  try {
    const user = await t.user('bench@example.com');
    await t.deps.db
      .updateTable('organizations')
      .set({ plan: 'enterprise' })
      .where('id', '=', user.orgId)
      .execute();
    const project = await insertProject(t, user.orgId, { name: 'big' });
    for (let i = 0; i < DEPLOYMENTS; i++) {
      await insertDeployment(t, project.id, {
        created_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
        commit_hash: i.toString(16).padStart(40, 'a'),
        commit_message: `Change number ${i}`,
        author: 'dev@example.com',
        status: i % 10 === 0 ? 'failed' : 'live',
      });
    }
    const signIn = await t.app.inject({
      method: 'POST',
      url: '/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: user.token }).toString(),
    });
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;

    const time = async (url: string, headers: Record<string, string>) => {
      const ms: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const t0 = performance.now();
        const res = await t.app.inject({ method: 'GET', url, headers });
        ms.push(performance.now() - t0);
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
      return { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99) };
    };
    // Alternate so that both see the same warm caches.
    const api = await time(`/v1/projects/${project.id}/deployments?limit=20`, {
      authorization: `Bearer ${user.token}`,
    });
    const page = await time(`/projects/${project.id}`, { cookie });
    // The last page, by the cursor its Older link carries: walk the list to it.
    let cursor = '';
    for (let i = 1; i < DEPLOYMENTS / 20; i++) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/v1/projects/${project.id}/deployments?limit=20${cursor ? `&cursor=${cursor}` : ''}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      cursor = res.json<{ meta: { next: string } }>().meta.next;
    }
    const deepPage = await time(`/projects/${project.id}?cursor=${cursor}`, { cookie });

    const html = (await t.app.inject({ method: 'GET', url: `/projects/${project.id}`, headers: { cookie } }))
      .body;
    const assets = [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    let assetBytes = 0;
    for (const url of assets) {
      const res = await t.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'br, gzip' } });
      assetBytes += res.rawPayload.length;
    }
    const htmlGz = gzipSync(html).length;
    const ms = (x: number) => x.toFixed(2);
    return [
      table([
        {
          request: `API: GET /v1/projects/:id/deployments?limit=20 (baseline)`,
          p50_ms: ms(api.p50),
          p99_ms: ms(api.p99),
          ratio: '1.00',
        },
        {
          request: `dashboard: project page, ${DEPLOYMENTS} deployments`,
          p50_ms: ms(page.p50),
          p99_ms: ms(page.p99),
          ratio: (page.p50 / api.p50).toFixed(2),
        },
        {
          request: `dashboard: project page ${DEPLOYMENTS / 20} (last, by cursor)`,
          p50_ms: ms(deepPage.p50),
          p99_ms: ms(deepPage.p99),
          ratio: (deepPage.p50 / api.p50).toFixed(2),
        },
      ]),
      '',
      table([
        { transfer: 'project page HTML (gzip)', bytes: htmlGz },
        { transfer: `script and style (${assets.length} files, brotli)`, bytes: assetBytes },
        { transfer: 'first visit in all', bytes: htmlGz + assetBytes },
      ]),
    ].join('\n');
  } finally {
    await t.close();
  }
}
