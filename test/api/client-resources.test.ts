import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type SlipwayClient } from '../../api/client/index.ts';
import { collect } from '../../api/client/pagination.ts';
import { sendJson, startStub, type StubServer } from '../helpers/stub-server.ts';
import {
  alert,
  delivery,
  deployment,
  domain,
  envVar,
  ids,
  list,
  member,
  ok,
  organization,
  project,
  webhook,
} from './client-fixtures.ts';

const P = ids.project;
const deleted = { success: true, message: 'gone' };

interface Case {
  name: string;
  call: (c: SlipwayClient) => Promise<unknown>;
  method: string;
  url: string;
  body?: unknown;
  /** Raw bytes sent instead of JSON (uploads), as text. */
  bytes?: string;
  answer: unknown;
  status?: number;
  contentType?: string;
  expected: unknown;
}

const SHA_A = 'a'.repeat(64);
const HOOK = {
  id: 'dph_aaaaaaaaaaaaaaaaaaaa',
  name: 'cms',
  branch: 'main',
  urlPrefix: 'http://localhost:3000/v1/hooks/deploy/dph_aaaaaaaaaaaaaaaaaaaa.',
  createdBy: 'a@example.com',
  createdAt: '2026-11-22T10:00:00.000Z',
  lastUsedAt: null,
};
const SHA_B = 'b'.repeat(64);

/** Every operation: the request it must send, and what it makes of the answer. */
const cases: Case[] = [
  {
    name: 'user.get',
    call: (c) => c.user.get(),
    method: 'GET',
    url: '/v1/user',
    answer: ok({ id: ids.user, email: 'a@example.com', organizations: [] }),
    expected: { id: ids.user, email: 'a@example.com', organizations: [] },
  },
  {
    name: 'user.tokens.create',
    call: (c) => c.user.tokens.create({ name: 'ci' }),
    method: 'POST',
    url: '/v1/user/tokens',
    body: { name: 'ci' },
    status: 201,
    answer: ok({ id: ids.token, name: 'ci', token: 'slw_secret', createdAt: '2026-11-22T10:00:00.000Z' }),
    expected: { id: ids.token, name: 'ci', token: 'slw_secret', createdAt: '2026-11-22T10:00:00.000Z' },
  },
  {
    name: 'user.tokens.list',
    call: (c) => c.user.tokens.list({ limit: 5 }),
    method: 'GET',
    url: '/v1/user/tokens?limit=5',
    answer: list([]),
    expected: { data: [], meta: { page: 1, limit: 10, total: 0 } },
  },
  {
    name: 'user.tokens.revoke',
    call: (c) => c.user.tokens.revoke(ids.token),
    method: 'DELETE',
    url: `/v1/user/tokens/${ids.token}`,
    answer: deleted,
    expected: { message: 'gone' },
  },
  {
    name: 'projects.list',
    call: (c) => c.projects.list({ org: 'acme', status: 'deleted' }),
    method: 'GET',
    url: '/v1/projects?org=acme&status=deleted',
    answer: list([project()]),
    expected: { data: [project()], meta: { page: 1, limit: 10, total: 1 } },
  },
  {
    name: 'projects.create',
    call: (c) => c.projects.create({ name: 'web', repositoryUrl: 'file:///r', organizationId: ids.org }),
    method: 'POST',
    url: '/v1/projects',
    body: { name: 'web', repositoryUrl: 'file:///r', organizationId: ids.org },
    status: 201,
    answer: ok(project()),
    expected: project(),
  },
  {
    name: 'projects.get',
    call: (c) => c.projects.get(P),
    method: 'GET',
    url: `/v1/projects/${P}`,
    answer: ok(project()),
    expected: project(),
  },
  {
    name: 'projects.update',
    call: (c) => c.projects.update(P, { branch: 'trunk' }),
    method: 'PATCH',
    url: `/v1/projects/${P}`,
    body: { branch: 'trunk' },
    answer: ok(project({ branch: 'trunk' })),
    expected: project({ branch: 'trunk' }),
  },
  {
    name: 'projects.delete',
    call: (c) => c.projects.delete(P),
    method: 'DELETE',
    url: `/v1/projects/${P}`,
    answer: deleted,
    expected: { message: 'gone' },
  },
  {
    name: 'deployments.list',
    call: (c) =>
      c.deployments.list(P, { target: 'preview', branch: 'feat/x', commitHash: 'abcdef1', status: 'live' }),
    method: 'GET',
    url: `/v1/projects/${P}/deployments?target=preview&branch=feat%2Fx&commitHash=abcdef1&status=live`,
    answer: list([deployment()]),
    expected: { data: [deployment()], meta: { page: 1, limit: 10, total: 1 } },
  },
  {
    name: 'deployments.create',
    call: (c) => c.deployments.create(P, { branch: 'main', message: 'ship it' }),
    method: 'POST',
    url: `/v1/projects/${P}/deployments`,
    body: { branch: 'main', message: 'ship it' },
    status: 201,
    answer: ok(deployment({ message: 'ship it' })),
    expected: deployment({ message: 'ship it' }),
  },
  {
    name: 'deployments.get',
    call: (c) => c.deployments.get(ids.deployment),
    method: 'GET',
    url: `/v1/deployments/${ids.deployment}`,
    answer: ok(deployment()),
    expected: deployment(),
  },
  {
    name: 'deployments.logs',
    call: (c) => c.deployments.logs(ids.deployment, { type: 'runtime', tail: 5 }),
    method: 'GET',
    url: `/v1/deployments/${ids.deployment}/logs?type=runtime&tail=5`,
    answer: ok({ logs: 'a\nb', type: 'runtime' }),
    expected: { logs: 'a\nb', type: 'runtime' },
  },
  {
    name: 'deployments.rollback',
    call: (c) => c.deployments.rollback(ids.deployment),
    method: 'POST',
    url: `/v1/deployments/${ids.deployment}/rollback`,
    status: 201,
    answer: ok(deployment({ rollbackFrom: ids.deployment })),
    expected: deployment({ rollbackFrom: ids.deployment }),
  },
  {
    name: 'deployments.rollback to',
    call: (c) => c.deployments.rollback(ids.deployment, { to: 'dpl_earlier0000000000000' }),
    method: 'POST',
    url: `/v1/deployments/${ids.deployment}/rollback`,
    body: { to: 'dpl_earlier0000000000000' },
    status: 201,
    answer: ok(deployment({ rollbackFrom: ids.deployment, rollbackTo: 'dpl_earlier0000000000000' })),
    expected: deployment({ rollbackFrom: ids.deployment, rollbackTo: 'dpl_earlier0000000000000' }),
  },
  {
    name: 'deployments.redeploy',
    call: (c) => c.deployments.redeploy(ids.deployment),
    method: 'POST',
    url: `/v1/deployments/${ids.deployment}/redeploy`,
    status: 201,
    answer: ok(deployment({ message: `Redeploy of ${ids.deployment}` })),
    expected: deployment({ message: `Redeploy of ${ids.deployment}` }),
  },
  {
    name: 'deployments.promote',
    call: (c) => c.deployments.promote(ids.deployment),
    method: 'POST',
    url: `/v1/deployments/${ids.deployment}/promote`,
    answer: ok(deployment({ promotedAt: '2026-11-22T10:00:00.000Z' })),
    expected: deployment({ promotedAt: '2026-11-22T10:00:00.000Z' }),
  },
  {
    name: 'domains.list',
    call: (c) => c.domains.list(P),
    method: 'GET',
    url: `/v1/projects/${P}/domains`,
    answer: list([domain()]),
    expected: { data: [domain()], meta: { page: 1, limit: 10, total: 1 } },
  },
  {
    name: 'domains.add',
    call: (c) => c.domains.add(P, { domain: 'www.example.com' }),
    method: 'POST',
    url: `/v1/projects/${P}/domains`,
    body: { domain: 'www.example.com' },
    status: 201,
    answer: ok(domain()),
    expected: domain(),
  },
  {
    name: 'domains.verify',
    call: (c) => c.domains.verify(P, 'www.example.com'),
    method: 'POST',
    url: `/v1/projects/${P}/domains/www.example.com/verify`,
    answer: ok(domain({ status: 'verified', verifiedAt: '2026-11-22T10:00:00.000Z' })),
    expected: domain({ status: 'verified', verifiedAt: '2026-11-22T10:00:00.000Z' }),
  },
  {
    name: 'uploads.missing',
    call: (c) => c.uploads.missing(P, [SHA_A, SHA_B]),
    method: 'POST',
    url: `/v1/projects/${P}/files/missing`,
    body: { sha256: [SHA_A, SHA_B] },
    answer: ok({ missing: [SHA_B] }),
    expected: { missing: [SHA_B] },
  },
  {
    name: 'uploads.upload',
    call: (c) => c.uploads.upload(P, SHA_A, new TextEncoder().encode('hello')),
    method: 'PUT',
    url: `/v1/projects/${P}/files/${SHA_A}`,
    bytes: 'hello',
    answer: ok({ sha256: SHA_A, size: 5 }),
    status: 201,
    expected: { sha256: SHA_A, size: 5 },
  },
  {
    name: 'domains.remove',
    call: (c) => c.domains.remove(P, 'www.example.com'),
    method: 'DELETE',
    url: `/v1/projects/${P}/domains/www.example.com`,
    answer: deleted,
    expected: { message: 'gone' },
  },
  {
    name: 'env.list',
    call: (c) => c.env.list(P, { environment: 'preview' }),
    method: 'GET',
    url: `/v1/projects/${P}/env?environment=preview`,
    answer: list([envVar({ environment: 'preview' })]),
    expected: { data: [envVar({ environment: 'preview' })], meta: { page: 1, limit: 10, total: 1 } },
  },
  {
    name: 'env.create',
    call: (c) => c.env.create(P, { key: 'API_URL', value: 'https://api.example.com' }),
    method: 'POST',
    url: `/v1/projects/${P}/env`,
    body: { key: 'API_URL', value: 'https://api.example.com' },
    status: 201,
    answer: ok(envVar()),
    expected: envVar(),
  },
  {
    name: 'env.update',
    call: (c) => c.env.update(P, 'API_URL', { encrypted: true }, { environment: 'production' }),
    method: 'PATCH',
    url: `/v1/projects/${P}/env/API_URL?environment=production`,
    body: { encrypted: true },
    answer: ok(envVar({ encrypted: true, value: null })),
    expected: envVar({ encrypted: true, value: null }),
  },
  {
    name: 'env.remove',
    call: (c) => c.env.remove(P, 'API_URL'),
    method: 'DELETE',
    url: `/v1/projects/${P}/env/API_URL`,
    answer: deleted,
    expected: { message: 'gone' },
  },
  {
    name: 'env.import',
    call: (c) => c.env.import(P, { variables: [{ key: 'A', value: '1' }], overwrite: true }),
    method: 'POST',
    url: `/v1/projects/${P}/env/import`,
    body: { variables: [{ key: 'A', value: '1' }], overwrite: true },
    answer: ok({ created: 1, updated: 0, skipped: 0 }),
    expected: { created: 1, updated: 0, skipped: 0 },
  },
  {
    name: 'env.export (env)',
    call: (c) => c.env.export(P),
    method: 'GET',
    url: `/v1/projects/${P}/env/export`,
    answer: 'A=1\nB="two words"\n',
    contentType: 'text/plain; charset=utf-8',
    expected: 'A=1\nB="two words"\n',
  },
  {
    name: 'env.export (yaml)',
    call: (c) => c.env.export(P, { format: 'yaml', environment: 'preview' }),
    method: 'GET',
    url: `/v1/projects/${P}/env/export?format=yaml&environment=preview`,
    answer: 'A: "1"\n',
    contentType: 'application/yaml',
    expected: 'A: "1"\n',
  },
  {
    name: 'env.export (json)',
    call: (c) => c.env.export(P, { format: 'json' }),
    method: 'GET',
    url: `/v1/projects/${P}/env/export?format=json`,
    answer: ok({ A: '1' }),
    expected: { A: '1' },
  },
  {
    name: 'organizations.list',
    call: (c) => c.organizations.list(),
    method: 'GET',
    url: '/v1/organizations',
    answer: list([organization()]),
    expected: { data: [organization()], meta: { page: 1, limit: 10, total: 1 } },
  },
  {
    name: 'organizations.create',
    call: (c) => c.organizations.create({ name: 'acme', displayName: 'Acme' }),
    method: 'POST',
    url: '/v1/organizations',
    body: { name: 'acme', displayName: 'Acme' },
    status: 201,
    answer: ok(organization()),
    expected: organization(),
  },
  {
    name: 'organizations.get',
    call: (c) => c.organizations.get('acme'),
    method: 'GET',
    url: '/v1/organizations/acme',
    answer: ok(organization()),
    expected: organization(),
  },
  {
    name: 'organizations.update',
    call: (c) => c.organizations.update(ids.org, { plan: 'pro' }),
    method: 'PATCH',
    url: `/v1/organizations/${ids.org}`,
    body: { plan: 'pro' },
    answer: ok(organization({ plan: 'pro' })),
    expected: organization({ plan: 'pro' }),
  },
  {
    name: 'organizations.members.list',
    call: (c) => c.organizations.members.list(ids.org, { page: 2 }),
    method: 'GET',
    url: `/v1/organizations/${ids.org}/members?page=2`,
    answer: list([member()], { page: 2, limit: 10, total: 11 }),
    expected: { data: [member()], meta: { page: 2, limit: 10, total: 11 } },
  },
  {
    name: 'organizations.members.invite',
    call: (c) => c.organizations.members.invite(ids.org, { email: 'dev@example.com', role: 'developer' }),
    method: 'POST',
    url: `/v1/organizations/${ids.org}/members/invite`,
    body: { email: 'dev@example.com', role: 'developer' },
    status: 201,
    answer: ok(member()),
    expected: member(),
  },
  {
    name: 'organizations.members.update',
    call: (c) => c.organizations.members.update(ids.org, 'dev+ci@example.com', { role: 'viewer' }),
    method: 'PATCH',
    url: `/v1/organizations/${ids.org}/members/dev%2Bci%40example.com`,
    body: { role: 'viewer' },
    answer: ok(member({ role: 'viewer' })),
    expected: member({ role: 'viewer' }),
  },
  {
    name: 'organizations.members.remove',
    call: (c) => c.organizations.members.remove(ids.org, 'dev@example.com'),
    method: 'DELETE',
    url: `/v1/organizations/${ids.org}/members/dev%40example.com`,
    answer: deleted,
    expected: { message: 'gone' },
  },
  {
    name: 'monitoring.metrics',
    call: (c) => c.monitoring.metrics(P, { period: '7d', metric: 'latency' }),
    method: 'GET',
    url: `/v1/projects/${P}/metrics?period=7d&metric=latency`,
    answer: ok({ period: '7d', metrics: { latency: { avg: 12.5, p50: 10, p95: 50, p99: 100 } } }),
    expected: { period: '7d', metrics: { latency: { avg: 12.5, p50: 10, p95: 50, p99: 100 } } },
  },
  {
    name: 'monitoring.health',
    call: (c) => c.monitoring.health(P),
    method: 'GET',
    url: `/v1/projects/${P}/health`,
    answer: ok({ status: 'unknown', uptime: null, lastCheck: null, responseTime: null }),
    expected: { status: 'unknown', uptime: null, lastCheck: null, responseTime: null },
  },
  {
    name: 'monitoring.alerts',
    call: (c) => c.monitoring.alerts(P, { status: 'active', limit: 3 }),
    method: 'GET',
    url: `/v1/projects/${P}/alerts?status=active&limit=3`,
    answer: list([alert()]),
    expected: { data: [alert()], meta: { page: 1, limit: 10, total: 1 } },
  },
  {
    name: 'webhooks.create',
    call: (c) =>
      c.webhooks.create(P, {
        url: 'https://hooks.example.com/slipway',
        events: ['deployment.success'],
        secret: 'a-long-shared-secret',
      }),
    method: 'POST',
    url: `/v1/projects/${P}/webhooks`,
    body: {
      url: 'https://hooks.example.com/slipway',
      events: ['deployment.success'],
      secret: 'a-long-shared-secret',
    },
    status: 201,
    answer: ok(webhook()),
    expected: webhook(),
  },
  {
    name: 'webhooks.list',
    call: (c) => c.webhooks.list(P),
    method: 'GET',
    url: `/v1/projects/${P}/webhooks`,
    answer: list([webhook()]),
    expected: { data: [webhook()], meta: { page: 1, limit: 10, total: 1 } },
  },
  {
    name: 'webhooks.remove',
    call: (c) => c.webhooks.remove(P, ids.webhook),
    method: 'DELETE',
    url: `/v1/projects/${P}/webhooks/${ids.webhook}`,
    answer: deleted,
    expected: { message: 'gone' },
  },
  {
    name: 'webhooks.deliveries',
    call: (c) => c.webhooks.deliveries(P, ids.webhook),
    method: 'GET',
    url: `/v1/projects/${P}/webhooks/${ids.webhook}/deliveries`,
    answer: list([delivery()]),
    expected: { data: [delivery()], meta: { page: 1, limit: 10, total: 1 } },
  },
  {
    name: 'webhooks.redeliver',
    call: (c) => c.webhooks.redeliver(P, ids.webhook, ids.delivery),
    method: 'POST',
    url: `/v1/projects/${P}/webhooks/${ids.webhook}/deliveries/${ids.delivery}/redeliver`,
    status: 201,
    answer: ok(delivery()),
    expected: delivery(),
  },
  {
    name: 'deployHooks.create',
    call: (c) => c.deployHooks.create(P, { name: 'cms', branch: 'main' }),
    method: 'POST',
    url: `/v1/projects/${P}/deploy-hooks`,
    body: { name: 'cms', branch: 'main' },
    status: 201,
    answer: ok({ ...HOOK, url: `${HOOK.urlPrefix}slwh_secret` }),
    expected: { ...HOOK, url: `${HOOK.urlPrefix}slwh_secret` },
  },
  {
    name: 'deployHooks.list',
    call: (c) => c.deployHooks.list(P, { limit: 5 }),
    method: 'GET',
    url: `/v1/projects/${P}/deploy-hooks?limit=5`,
    answer: list([HOOK]),
    expected: { data: [HOOK], meta: { page: 1, limit: 10, total: 1 } },
  },
  {
    name: 'deployHooks.remove',
    call: (c) => c.deployHooks.remove(P, HOOK.id),
    method: 'DELETE',
    url: `/v1/projects/${P}/deploy-hooks/${HOOK.id}`,
    answer: deleted,
    expected: { message: 'gone' },
  },
  {
    name: 'deployHooks.trigger',
    call: (c) => c.deployHooks.trigger(`${HOOK.id}.slwh_secret`),
    method: 'POST',
    url: `/v1/hooks/deploy/${HOOK.id}.slwh_secret`,
    status: 201,
    answer: ok({ id: ids.deployment, url: 'http://web-abc.localhost:3001', created: true }),
    expected: { id: ids.deployment, url: 'http://web-abc.localhost:3001', created: true },
  },
];

describe('every client operation (stub server)', () => {
  let stub: StubServer;
  let client: SlipwayClient;
  let current: Case | undefined;

  beforeAll(async () => {
    stub = await startStub((_req, res) => {
      const c = current!;
      if (typeof c.answer === 'string') {
        res.writeHead(c.status ?? 200, { 'content-type': c.contentType ?? 'text/plain' });
        res.end(c.answer);
        return;
      }
      sendJson(res, c.status ?? 200, c.answer);
    });
    client = createClient({ baseUrl: stub.url, token: 'slw_test', retries: 0 });
  });
  afterAll(() => stub.close());

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    current = c;
    const before = stub.requests.length;
    expect(await c.call(client)).toEqual(c.expected);
    expect(stub.requests).toHaveLength(before + 1);
    const req = stub.requests[before]!;
    expect(`${req.method} ${req.url}`).toBe(`${c.method} ${c.url}`);
    if (c.bytes !== undefined) {
      expect(req.body).toBe(c.bytes);
      expect(req.headers['content-type']).toBe('application/octet-stream');
    } else if (c.body === undefined) {
      expect(req.body).toBe('');
      expect(req.headers['content-type']).toBeUndefined();
    } else {
      expect(JSON.parse(req.body)).toEqual(c.body);
    }
    // Every POST carries a key, so that its retries are safe.
    expect(req.headers['idempotency-key'] !== undefined).toBe(c.method === 'POST');
  });

  it('walks the pages of every list with the iterators', async () => {
    const pages = new Map<string, unknown>();
    // Page n points at page n + 1 with the cursor `c<n+1>`; page 2 is the last.
    const walker = await startStub((req, res) => {
      const url = new URL(req.url, 'http://x');
      const cursor = url.searchParams.get('cursor');
      const page = cursor ? Number(cursor.slice(1)) : Number(url.searchParams.get('page') ?? 1);
      pages.set(url.pathname, page);
      const item = member({ email: `m${page}@example.com` });
      sendJson(res, 200, list([item], { limit: 1, next: page < 2 ? `c${page + 1}` : null }));
    });
    try {
      const c = createClient({ baseUrl: walker.url, token: 'slw_test' });
      const all = await collect(c.iterate.members(ids.org, { limit: 1 }));
      expect(all.map((m) => m.email)).toEqual(['m1@example.com', 'm2@example.com']);
      expect(walker.requests.map((r) => r.url)).toEqual([
        `/v1/organizations/${ids.org}/members?limit=1`,
        `/v1/organizations/${ids.org}/members?limit=1&cursor=c2`,
      ]);
      const fromPage2 = await collect(c.iterate.members(ids.org, { limit: 1, page: 2 }));
      expect(fromPage2.map((m) => m.email)).toEqual(['m2@example.com']);
      expect(pages.get(`/v1/organizations/${ids.org}/members`)).toBe(2);
    } finally {
      await walker.close();
    }
  });
});
