import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors.ts';
import { bodyHash, IDEMPOTENCY_LEASE_MS } from '../../server/platform/http/idempotency.ts';
import { sendError } from '../../server/platform/http/errors.ts';
import { registerRoutes } from '../../server/platform/http/route.ts';
import { route } from '../../server/platform/http/route-spec.ts';
import type { Deps } from '../../server/platform/deps/deps.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { challengeFor, credentialFor, ledgerOf, topUp, unlimited } from '../helpers/payments.ts';

const repo = 'https://example.com/repo.git';
const key = (name: string) => ({ 'idempotency-key': `${name}-${Math.random().toString(36).slice(2)}` });

describe('Idempotency-Key', () => {
  const clock = new ManualClock('2026-11-22T10:00:00.000Z');
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let projectId: string;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    bob = await t.user('bob@example.com');
    await unlimited(t, alice);
    await topUp(t, alice, 10_000);
    const project = await t.call(alice, 'POST', '/v1/projects', {
      name: 'site',
      repositoryUrl: repo,
      organizationId: alice.orgId,
    });
    projectId = project.body.data.id;
  });
  afterAll(() => t.close());

  const deploymentCount = async () =>
    Number(
      (
        await t.deps.db
          .selectFrom('deployments')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('project_id', '=', projectId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const charges = async () => (await ledgerOf(t, alice.orgId)).filter((e) => e.kind === 'charge').length;

  describe('on the reference interface (/v1)', () => {
    const deploy = (headers: Record<string, string>, body: unknown = { message: 'ship it' }, user = alice) =>
      t.call(user, 'POST', `/v1/projects/${projectId}/deployments`, body, headers);

    it('replays the first answer with Idempotent-Replayed and deploys once', async () => {
      const before = await deploymentCount();
      const k = key('replay');
      const first = await deploy(k);
      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const again = await deploy(k, { message: 'ship it' });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers['content-type']).toBe(first.headers['content-type']);
      expect(again.text).toBe(first.text);
      expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
      expect(await deploymentCount()).toBe(before + 1);
    });

    it('treats the same body with its keys in another order as the same request', async () => {
      const k = key('order');
      const first = await deploy(k, { message: 'm', branch: 'main' });
      const again = await deploy(k, { branch: 'main', message: 'm' });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.data.id).toBe(first.body.data.id);
    });

    it('answers CONFLICT for the same key with another body or on another path', async () => {
      const k = key('conflict');
      expect((await deploy(k, { message: 'a' })).status).toBe(201);
      const other = await deploy(k, { message: 'b' });
      expect(other.status).toBe(409);
      expect(other.body).toEqual({
        success: false,
        error: {
          code: 'CONFLICT',
          message: expect.stringMatching(/already used for POST .* different request/),
        },
      });
      const elsewhere = await t.call(alice, 'POST', '/v1/organizations', { name: 'elsewhere-org' }, k);
      expect(elsewhere.status).toBe(409);
      expect(elsewhere.body.error.code).toBe('CONFLICT');
    });

    it('runs 10 concurrent requests with one key once', async () => {
      const before = await deploymentCount();
      const k = key('concurrent');
      const answers = await Promise.all(Array.from({ length: 10 }, () => deploy(k)));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
      expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
      expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(9);
      expect(await deploymentCount()).toBe(before + 1);
    });

    it('keeps keys apart per user', async () => {
      const k = key('per-user');
      await t.call(alice, 'POST', '/v1/organizations', { name: 'alice-team' }, k);
      const bobs = await t.call(bob, 'POST', '/v1/organizations', { name: 'bob-team' }, k);
      expect(bobs.status).toBe(201);
      expect(bobs.headers['idempotent-replayed']).toBeUndefined();
      expect(bobs.body.data.name).toBe('bob-team');
    });

    it('stores 4xx answers and replays them', async () => {
      await t.call(alice, 'POST', '/v1/projects', {
        name: 'taken',
        repositoryUrl: repo,
        organizationId: alice.orgId,
      });
      const k = key('4xx');
      const body = { name: 'taken', repositoryUrl: repo, organizationId: alice.orgId };
      const first = await t.call(alice, 'POST', '/v1/projects', body, k);
      expect(first.status).toBe(409);
      const list = await t.call(alice, 'GET', `/v1/projects?org=${alice.orgId}&limit=100`);
      const taken = list.body.data.find((p: { name: string }) => p.name === 'taken');
      await t.call(alice, 'DELETE', `/v1/projects/${taken.id}`);
      // The name is free now, but the key's answer is settled.
      const again = await t.call(alice, 'POST', '/v1/projects', body, k);
      expect(again.status).toBe(409);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
    });

    it('does not store a request that failed validation', async () => {
      const k = key('invalid');
      const bad = await t.call(alice, 'POST', '/v1/organizations', { name: '-bad' }, k);
      expect(bad.status).toBe(400);
      const good = await t.call(alice, 'POST', '/v1/organizations', { name: 'fixed-name' }, k);
      expect(good.status).toBe(201);
      expect(good.headers['idempotent-replayed']).toBeUndefined();
    });

    it('rejects a malformed key, naming the header', async () => {
      const res = await deploy({ 'idempotency-key': 'x'.repeat(256) });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ path: 'Idempotency-Key', message: expect.any(String) }]);
    });

    it('forgets keys after 24 hours', async () => {
      const before = await deploymentCount();
      const k = key('expiry');
      const first = await deploy(k);
      clock.advance(24 * 3_600_000 - 1);
      const within = await deploy(k);
      expect(within.headers['idempotent-replayed']).toBe('true');
      expect(within.body.data.id).toBe(first.body.data.id);
      clock.advance(1);
      const after = await deploy(k);
      expect(after.status).toBe(201);
      expect(after.headers['idempotent-replayed']).toBeUndefined();
      expect(after.body.data.id).not.toBe(first.body.data.id);
      expect(await deploymentCount()).toBe(before + 2);
    });
  });

  describe('on the paid interface (/api/v1)', () => {
    const body = () => ({ projectId });

    it('lets a client pay after a 402 with the same key, then replays the paid answer without charging again', async () => {
      const k = key('paid');
      const unpaid = await t.call(alice, 'POST', '/api/v1/deployments', body(), k);
      expect(unpaid.status).toBe(402);
      const credential = credentialFor(await challengeFor(t, alice, '/api/v1/deployments', body()));
      const [deployments, charged] = [await deploymentCount(), await charges()];
      const paid = await t.call(alice, 'POST', '/api/v1/deployments', body(), {
        ...k,
        'payment-authorization': credential,
      });
      expect(paid.status).toBe(201);
      const again = await t.call(alice, 'POST', '/api/v1/deployments', body(), {
        ...k,
        'payment-authorization': credential,
      });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(paid.text);
      expect(again.headers['payment-receipt']).toBe(paid.headers['payment-receipt']);
      const noCredential = await t.call(alice, 'POST', '/api/v1/deployments', body(), k);
      expect(noCredential.status).toBe(201);
      expect(noCredential.body).toEqual(paid.body);
      expect(await deploymentCount()).toBe(deployments + 1);
      expect(await charges()).toBe(charged + 1);
    });

    it('answers CONFLICT, unenveloped, for the same key with another body', async () => {
      const k = key('paid-conflict');
      const credential = credentialFor(await challengeFor(t, alice, '/api/v1/deployments', body()));
      await t.call(alice, 'POST', '/api/v1/deployments', body(), {
        ...k,
        'payment-authorization': credential,
      });
      const other = await t.call(alice, 'POST', '/api/v1/deployments', { projectId, branch: 'other' }, k);
      expect(other.status).toBe(409);
      expect(other.body).toEqual({ code: 'CONFLICT', message: expect.stringMatching(/different request/) });
    });

    it('runs 10 concurrent paid requests with one key once: one deployment, one charge', async () => {
      const k = key('paid-concurrent');
      const credential = credentialFor(await challengeFor(t, alice, '/api/v1/deployments', body()));
      const [deployments, charged] = [await deploymentCount(), await charges()];
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          t.call(alice, 'POST', '/api/v1/deployments', body(), { ...k, 'payment-authorization': credential }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
      expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
      expect(await deploymentCount()).toBe(deployments + 1);
      expect(await charges()).toBe(charged + 1);
    });
  });

  describe('in the route layer', () => {
    let app: FastifyInstance;
    let deps: Deps;
    let runs = 0;
    let gate: { promise: Promise<void>; open: () => void } | undefined;

    beforeAll(async () => {
      app = Fastify();
      app.setErrorHandler((err, req, reply) => sendError(req, reply, err));
      // The routes' own deps, so a test can shorten the wait without touching the service's.
      deps = { ...t.deps, config: { ...t.deps.config } };
      registerRoutes(app, deps, [
        route({
          method: 'POST',
          url: '/v1/test/flaky',
          tag: 'test',
          summary: 'fails with a 500 on the first run',
          handler: async () => {
            runs++;
            if (runs === 1) throw new Error('boom');
            return { kind: 'data', data: { runs }, status: 201 };
          },
        }),
        route({
          method: 'POST',
          url: '/v1/test/slow',
          tag: 'test',
          summary: 'waits for the test to open the gate',
          handler: async () => {
            await gate?.promise;
            return { kind: 'data', data: { done: true }, status: 201 };
          },
        }),
        route({
          method: 'POST',
          url: '/v1/test/unavailable',
          tag: 'test',
          summary: 'always 503',
          handler: async () => {
            runs++;
            throw new ApiError('SERVICE_UNAVAILABLE', 'later');
          },
        }),
      ]);
      await app.ready();
    });
    afterAll(() => app.close());
    afterEach(() => {
      deps.config.idempotencyWaitMs = t.deps.config.idempotencyWaitMs;
    });

    const post = (url: string, headers: Record<string, string>) =>
      app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${alice.token}`, ...headers } });

    it('does not store a 5xx: the key is released and the request runs again', async () => {
      runs = 0;
      const k = key('5xx');
      expect((await post('/v1/test/flaky', k)).statusCode).toBe(500);
      const second = await post('/v1/test/flaky', k);
      expect(second.statusCode).toBe(201);
      expect(second.json()).toEqual({ success: true, data: { runs: 2 } });
      const third = await post('/v1/test/flaky', k);
      expect(third.headers['idempotent-replayed']).toBe('true');
      expect(runs).toBe(2);
      expect((await post('/v1/test/unavailable', k)).statusCode).toBe(409);
      const k2 = key('503');
      await post('/v1/test/unavailable', k2);
      await post('/v1/test/unavailable', k2);
      expect(runs).toBe(4);
    });

    it('answers 409 when the first request with the key outlasts the wait, then replays it', async () => {
      deps.config.idempotencyWaitMs = 150;
      let open!: () => void;
      gate = { promise: new Promise<void>((resolve) => (open = resolve)), open: () => open() };
      const k = key('slow');
      const first = post('/v1/test/slow', k);
      await new Promise((resolve) => setTimeout(resolve, 30));
      const waiting = await post('/v1/test/slow', k);
      expect(waiting.statusCode).toBe(409);
      expect(waiting.json().error.message).toMatch(/is in progress/);
      gate.open();
      expect((await first).statusCode).toBe(201);
      const replay = await post('/v1/test/slow', k);
      expect(replay.statusCode).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      gate = undefined;
    });

    it('takes over a key whose first request died holding it', async () => {
      const k = key('abandoned');
      await t.deps.db
        .insertInto('idempotency_keys')
        .values({
          user_id: alice.userId,
          key: k['idempotency-key'],
          method: 'POST',
          path: '/v1/test/slow',
          body_hash: bodyHash(undefined),
          state: 'in-progress',
          status: null,
          response_body: null,
          response_headers: null,
          created_at: new Date(clock.now().getTime() - IDEMPOTENCY_LEASE_MS - 1).toISOString(),
          expires_at: new Date(clock.now().getTime() + 3_600_000).toISOString(),
        })
        .execute();
      const res = await post('/v1/test/slow', k);
      expect(res.statusCode).toBe(201);
    });
  });
});
