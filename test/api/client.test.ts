import type { AddressInfo } from 'node:net';
import { parse as parseDotenv } from 'dotenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors.ts';
import { createClient, type SlipwayClient } from '../../api/client/index.ts';
import { collect } from '../../api/client/pagination.ts';
import type { Dns } from '../../server/core/dns.ts';
import { newId } from '../../server/core/ids.ts';
import { appendLog } from '../../server/features/deployments/deployment-logs.ts';
import { markBuilding, markDeploying, markLive } from '../../server/features/deployments/deployment-state.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('client against a real server', () => {
  let t: TestApp;
  let clock: ManualClock;
  let baseUrl: string;
  let alice: TestUser;
  let viewer: TestUser;
  let mallory: TestUser;
  let a: SlipwayClient;
  const txt = new Map<string, string>();
  /** Every URL alice's client asked for, to count pages. */
  const urls: string[] = [];

  beforeAll(async () => {
    clock = new ManualClock();
    const dns: Dns = {
      resolveTxt: async (name) => {
        const value = txt.get(name);
        if (value === undefined)
          throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
        return [[value]];
      },
    };
    t = await createTestApp({ clock, dns });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    alice = await t.user('alice@example.com');
    viewer = await t.user('viewer@example.com');
    mallory = await t.user('mallory@example.com');
    // This file makes well over the free plan's 100 requests an hour as alice.
    await t.deps.db
      .updateTable('organizations')
      .set({ plan: 'enterprise' })
      .where('id', '=', alice.orgId)
      .execute();
    const now = clock.now().toISOString();
    await t.deps.db
      .insertInto('memberships')
      .values({
        id: newId('mem'),
        organization_id: alice.orgId,
        email: viewer.email,
        user_id: viewer.userId,
        role: 'viewer',
        invited_at: now,
        joined_at: now,
      })
      .execute();
    a = createClient({
      baseUrl,
      token: alice.token,
      fetch: (url, init) => {
        urls.push(url);
        return fetch(url, init);
      },
    });
  });
  afterAll(() => t.close());

  const as = (user: TestUser | string) =>
    createClient({ baseUrl, token: typeof user === 'string' ? user : user.token });
  let n = 0;
  const newProject = (name: string, extra: { organizationId?: string; branch?: string } = {}) => {
    clock.advance(1000);
    return a.projects.create({
      name: `${name}-${++n}`,
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
      ...extra,
    });
  };

  it('unwraps the envelope and keeps the rate-limit headers', async () => {
    const me = await a.user.get();
    expect(me.id).toBe(alice.userId);
    expect(me.email).toBe('alice@example.com');
    expect(me.organizations).toContainEqual({
      id: alice.orgId,
      name: expect.any(String),
      role: 'owner',
      plan: 'enterprise',
    });
    const rl = a.rateLimit!;
    expect(rl.limit).toBe(10_000);
    expect(rl.remaining).toBeLessThan(10_000);
    expect(rl.reset).toBe(Date.parse('2026-11-22T11:00:00.000Z') / 1000);
  });

  it('creates, lists and revokes tokens', async () => {
    const created = await a.user.tokens.create({ name: 'ci' });
    expect(created.token).toMatch(/^slw_[A-Za-z0-9_-]{32,}$/);
    const ci = as(created.token);
    expect((await ci.user.get()).id).toBe(alice.userId);
    const tokens = await collect(a.iterate.tokens());
    expect(tokens.find((tk) => tk.id === created.id)).toMatchObject({
      name: 'ci',
      prefix: created.token.slice(0, tokens[0]!.prefix.length),
    });
    expect((await a.user.tokens.revoke(created.id)).message).toContain(created.id);
    const err = await rejection(ci.user.get());
    expect(err).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('creates, reads, updates and deletes a project', async () => {
    const created = await newProject('crud');
    expect(created).toMatchObject({
      status: 'active',
      branch: 'main',
      organizationId: alice.orgId,
      deploymentUrl: null,
    });
    expect(await a.projects.get(created.id)).toEqual(created);
    const updated = await a.projects.update(created.id, { branch: 'trunk' });
    expect(updated.branch).toBe('trunk');
    expect((await a.projects.delete(created.id)).message).toBe(`Project ${created.id} deleted`);
    expect(await rejection(a.projects.get(created.id))).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const deleted = await a.projects.list({ status: 'deleted' });
    expect(deleted.data.map((p) => p.id)).toContain(created.id);
  });

  it('throws ApiError with the server’s code, message and details', async () => {
    const bad = await rejection(
      a.projects.create({ name: '-Bad', repositoryUrl: 'ftp://x', organizationId: alice.orgId }),
    );
    expect(bad.status).toBe(400);
    expect(bad.code).toBe('VALIDATION_ERROR');
    expect((bad.details as { path: string }[]).map((d) => d.path).sort()).toEqual(['name', 'repositoryUrl']);

    const anonymous = await rejection(as('slw_not-a-real-token-at-all-0000000000').projects.list());
    expect(anonymous).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });

    const p = await newProject('guarded');
    const forbidden = await rejection(as(viewer).projects.delete(p.id));
    expect(forbidden).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    expect(forbidden.message).not.toBe('');
    expect((await as(viewer).projects.get(p.id)).id).toBe(p.id);

    const hidden = await rejection(as(mallory).projects.get(p.id));
    expect(hidden).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const badQuery = await rejection(a.projects.list({ limit: 101 }));
    expect(badQuery).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
  });

  it('walks 25 projects in pages of 10, newest first', async () => {
    const org = await a.organizations.create({ name: 'paged-org' });
    const names: string[] = [];
    for (let i = 0; i < 25; i++) names.push((await newProject('paged', { organizationId: org.id })).name);
    const before = urls.length;
    const all = await collect(a.iterate.projects({ org: 'paged-org', limit: 10 }));
    expect(all.map((p) => p.name)).toEqual(names.reverse());
    // The first page as asked, then each next one by the cursor the page before gave.
    const asked = urls.slice(before).map((u) => new URL(u).searchParams);
    expect(asked.map((q) => [q.get('org'), q.get('limit'), q.get('page')])).toEqual([
      ['paged-org', '10', null],
      ['paged-org', '10', null],
      ['paged-org', '10', null],
    ]);
    expect(asked.map((q) => q.get('cursor') !== null)).toEqual([false, true, true]);
    const last = await a.projects.list({ org: org.id, limit: 10, page: 3 });
    expect(last.meta).toEqual({ page: 3, limit: 10, total: 25, next: null });
    expect(last.data).toHaveLength(5);
  });

  describe('deployments', () => {
    const goLive = async (id: string) => {
      clock.advance(1000);
      await markBuilding(t.deps, id, {
        commitHash: 'abcdef1234567',
        commitMessage: 'Fix',
        author: 'a@example.com',
      });
      await markDeploying(t.deps, id, { buildDurationMs: 1200, artifactId: `art-${id}` });
      return markLive(t.deps, id, { deployDurationMs: 300 });
    };

    it('creates, lists with filters, reads and tails logs', async () => {
      const p = await newProject('dpl');
      const prod = await a.deployments.create(p.id, { message: 'first' });
      expect(prod).toMatchObject({
        projectId: p.id,
        status: 'queued',
        target: 'production',
        branch: 'main',
        message: 'first',
      });
      clock.advance(1000);
      const preview = await a.deployments.create(p.id, { branch: 'feat/x' });
      expect(preview.target).toBe('preview');
      const previews = await a.deployments.list(p.id, { target: 'preview' });
      expect(previews.data.map((d) => d.id)).toEqual([preview.id]);
      expect(previews.meta.total).toBe(1);
      expect((await collect(a.iterate.deployments(p.id, { limit: 1 }))).map((d) => d.id)).toEqual([
        preview.id,
        prod.id,
      ]);
      expect(await a.deployments.get(prod.id)).toEqual(prod);
      await appendLog(t.deps, prod.id, 'build', ['one', 'two', 'three']);
      expect(await a.deployments.logs(prod.id, { tail: 2 })).toEqual({ logs: 'two\nthree', type: 'build' });
    });

    it('follows the log over SSE until the deployment is live', async () => {
      const p = await newProject('follow');
      const d = await a.deployments.create(p.id);
      await appendLog(t.deps, d.id, 'build', ['cloning']);
      const follower = a.deployments.followLogs(d.id);
      const first = await follower.next();
      expect(first).toEqual({ done: false, value: 'cloning' });
      // While the stream is open: more lines, then the deployment goes live.
      await appendLog(t.deps, d.id, 'build', ['installing', 'multi\nline']);
      await goLive(d.id);
      const lines: string[] = [];
      let step = await follower.next();
      while (!step.done) {
        lines.push(step.value);
        step = await follower.next();
      }
      expect(lines).toEqual(['installing', 'multi', 'line']);
      expect(step.value).toEqual({ status: 'live', errorMessage: null });
      // A finished deployment streams its tail and the end at once.
      const events = await collect(a.deployments.followLogEvents(d.id, { tail: 1 }));
      expect(events).toEqual([
        { kind: 'line', line: 'line', id: expect.stringMatching(/^\d+$/) },
        { kind: 'end', status: 'live', errorMessage: null },
      ]);
    });

    it('promotes a live preview and rolls production back', async () => {
      const p = await newProject('ship');
      const preview = await a.deployments.create(p.id, { branch: 'feature', target: 'preview' });
      await goLive(preview.id);
      const promoted = await a.deployments.promote(preview.id);
      expect(promoted).toMatchObject({ id: preview.id, target: 'production', status: 'live' });
      expect(promoted.promotedAt).not.toBeNull();
      const again = await rejection(a.deployments.promote(preview.id));
      expect(again).toMatchObject({ status: 409, code: 'CONFLICT' });

      const next = await a.deployments.create(p.id);
      await goLive(next.id);
      const rollback = await a.deployments.rollback(next.id);
      expect(rollback).toMatchObject({ target: 'production', rollbackFrom: next.id, status: 'queued' });
      expect(rollback.id).not.toBe(next.id);
      expect(await rejection(as(viewer).deployments.rollback(next.id))).toMatchObject({ status: 403 });
    });
  });

  it('manages organizations and members', async () => {
    const org = await a.organizations.create({ name: 'acme-corp', displayName: 'Acme' });
    expect(org).toMatchObject({
      name: 'acme-corp',
      displayName: 'Acme',
      plan: 'free',
      role: 'owner',
      memberCount: 1,
    });
    expect(await a.organizations.get('acme-corp')).toEqual(org);
    expect((await a.organizations.update(org.id, { displayName: 'Acme Inc.' })).displayName).toBe(
      'Acme Inc.',
    );
    expect((await collect(a.iterate.organizations())).map((o) => o.id)).toContain(org.id);
    const invited = await a.organizations.members.invite(org.id, {
      email: 'Newbie@Example.com',
      role: 'developer',
    });
    expect(invited).toMatchObject({
      email: 'newbie@example.com',
      role: 'developer',
      status: 'invited',
      joinedAt: null,
    });
    const joined = await a.organizations.members.invite(org.id, { email: viewer.email, role: 'viewer' });
    expect(joined.status).toBe('active');
    expect((await a.organizations.members.update(org.id, viewer.email, { role: 'admin' })).role).toBe(
      'admin',
    );
    const members = await collect(a.iterate.members(org.id));
    expect(members.map((m) => m.email).sort()).toEqual([
      'alice@example.com',
      'newbie@example.com',
      viewer.email,
    ]);
    expect((await a.organizations.members.remove(org.id, 'newbie@example.com')).message).toContain(
      'newbie@example.com',
    );
    expect(await rejection(as(mallory).organizations.get(org.id))).toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
  });

  it('adds, verifies and removes a domain', async () => {
    const p = await newProject('dom');
    const added = await a.domains.add(p.id, { domain: 'www.client-test.example' });
    expect(added).toMatchObject({
      status: 'pending',
      sslStatus: 'pending',
      domain: 'www.client-test.example',
    });
    const challenge = added.dnsRecords.find((r) => r.type === 'TXT')!;
    const pending = await a.domains.verify(p.id, added.domain);
    expect(pending.status).toBe('pending');
    expect(pending.verification).toMatchObject({ expected: challenge.value, found: [] });
    txt.set(challenge.name, challenge.value);
    const verified = await a.domains.verify(p.id, added.domain);
    expect(verified.status).toBe('verified');
    expect(verified.verifiedAt).not.toBeNull();
    expect((await a.domains.list(p.id)).data.map((d) => d.domain)).toEqual(['www.client-test.example']);
    expect((await a.domains.remove(p.id, added.domain)).message).not.toBe('');
    expect((await a.domains.list(p.id)).meta.total).toBe(0);
  });

  it('manages environment variables and exports them in three formats', async () => {
    const p = await newProject('env');
    await a.env.create(p.id, { key: 'API_URL', value: 'https://api.example.com' });
    const secret = await a.env.create(p.id, { key: 'TOKEN', value: 'a "quoted" #secret', encrypted: true });
    expect(secret).toMatchObject({ key: 'TOKEN', value: null, encrypted: true, environment: 'production' });
    await a.env.create(p.id, { key: 'API_URL', value: 'http://localhost', environment: 'development' });
    expect(await rejection(a.env.update(p.id, 'API_URL', { value: 'x' }))).toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    const updated = await a.env.update(
      p.id,
      'API_URL',
      { value: 'https://v2.example.com' },
      { environment: 'production' },
    );
    expect(updated.value).toBe('https://v2.example.com');
    expect(
      await a.env.import(p.id, {
        variables: [
          { key: 'A', value: '1' },
          { key: 'TOKEN', value: 'x' },
        ],
      }),
    ).toEqual({
      created: 1,
      updated: 0,
      skipped: 1,
    });
    const prod = await a.env.list(p.id, { environment: 'production' });
    expect(prod.data.map((v) => v.key).sort()).toEqual(['A', 'API_URL', 'TOKEN']);
    const text = await a.env.export(p.id);
    expect(parseDotenv(text)).toEqual({
      A: '1',
      API_URL: 'https://v2.example.com',
      TOKEN: 'a "quoted" #secret',
    });
    expect(await a.env.export(p.id, { format: 'json', environment: 'development' })).toEqual({
      API_URL: 'http://localhost',
    });
    expect(await a.env.export(p.id, { format: 'yaml', environment: 'development' })).toContain('API_URL');
    expect(await rejection(as(viewer).env.export(p.id))).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    expect((await a.env.remove(p.id, 'A')).message).not.toBe('');
    expect((await a.env.list(p.id)).meta.total).toBe(3);
  });

  it('reads metrics, health and alerts', async () => {
    const p = await newProject('mon');
    const metrics = await a.monitoring.metrics(p.id, { period: '1h' });
    expect(metrics.period).toBe('1h');
    expect(metrics.metrics.requests).toEqual({ total: 0, success: 0, errors: 0 });
    expect((await a.monitoring.metrics(p.id, { metric: 'bandwidth' })).metrics).toEqual({
      bandwidth: { total: 0, unit: 'bytes' },
    });
    expect((await a.monitoring.health(p.id)).status).toBe('unknown');
    expect(await a.monitoring.alerts(p.id, { status: 'active' })).toEqual({
      data: [],
      meta: { page: 1, limit: 10, total: 0, next: null },
    });
  });

  it('registers a webhook, lists its deliveries and redelivers one', async () => {
    const p = await newProject('hooks');
    const hook = await a.webhooks.create(p.id, {
      url: 'https://hooks.example.com/slipway',
      events: ['deployment.created'],
      secret: 'a-long-enough-secret',
    });
    expect(hook).toMatchObject({
      url: 'https://hooks.example.com/slipway',
      events: ['deployment.created'],
      active: true,
    });
    expect(hook).not.toHaveProperty('secret');
    expect((await a.webhooks.list(p.id)).data.map((w) => w.id)).toEqual([hook.id]);
    const d = await a.deployments.create(p.id);
    const deliveries = await a.webhooks.deliveries(p.id, hook.id);
    expect(deliveries.meta.total).toBe(1);
    const [delivery] = deliveries.data;
    expect(delivery).toMatchObject({ event: 'deployment.created', webhookId: hook.id });
    expect(delivery!.payload.data).toMatchObject({ deploymentId: d.id });
    const again = await a.webhooks.redeliver(p.id, hook.id, delivery!.id);
    expect(again).toMatchObject({ webhookId: hook.id, event: 'deployment.created', status: 'pending' });
    expect((await a.webhooks.remove(p.id, hook.id)).message).not.toBe('');
    expect((await a.webhooks.list(p.id)).meta.total).toBe(0);
  });

  it('honours a real 429’s Retry-After when allowed to wait that long', async () => {
    const bob = await t.user('bob@example.com');
    const nowSec = Math.floor(clock.now().getTime() / 1000);
    const windowStart = nowSec - (nowSec % 3600);
    await t.deps.db
      .insertInto('rate_limits')
      .values({ user_id: bob.userId, window_start: windowStart, count: 100 })
      .execute();

    const impatient = as(bob);
    const err = await rejection(impatient.user.get());
    expect(err).toMatchObject({ status: 429, code: 'RATE_LIMIT_EXCEEDED' });
    expect(impatient.rateLimit).toEqual({ limit: 100, remaining: 0, reset: windowStart + 3600 });

    const waited: number[] = [];
    const patient = createClient({
      baseUrl,
      token: bob.token,
      maxRetryAfterMs: 2 * 3600 * 1000,
      // Waiting is moving the server's clock past the window.
      sleep: async (ms) => {
        waited.push(ms);
        clock.advance(ms);
      },
    });
    expect((await patient.user.get()).id).toBe(bob.userId);
    expect(waited).toEqual([(windowStart + 3600 - nowSec) * 1000]);
    expect(patient.rateLimit).toMatchObject({ limit: 100, remaining: 99 });
  });

  it('sends raw requests with client.request', async () => {
    const res = await a.request('GET', '/v1/projects', { query: { limit: 1 } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-api-version')).toBe('1.2.0');
    expect(res.body).toMatchObject({ success: true, meta: { limit: 1 } });
    const health = await a.request('GET', '/healthz');
    expect(health.body).toEqual({ status: 'ok' });
    expect(await rejection(a.request('GET', '/v1/nowhere'))).toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
  });
});
