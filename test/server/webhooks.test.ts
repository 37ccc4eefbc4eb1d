import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../server/core/ids.ts';
import { DELIVERY_JOB } from '../../server/features/webhooks/delivery-job.ts';
import { recordEvent } from '../../server/features/webhooks/outbox.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { readDeliveries } from '../helpers/deliveries.ts';

const NOW = '2026-11-22T10:00:00.000Z';
const SECRET = 'whsec-0123456789abcdef';

describe('webhooks', () => {
  let t: TestApp;
  let clock: ManualClock;
  let alice: TestUser;
  let dev: TestUser;
  let viewer: TestUser;
  let mallory: TestUser;
  let projectId: string;
  let otherProjectId: string;

  const createProject = async (name: string) => {
    const res = await t.call(alice, 'POST', '/v1/projects', {
      name,
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
    });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  const addMember = (user: TestUser, role: 'developer' | 'viewer') =>
    t.deps.db
      .insertInto('memberships')
      .values({
        id: newId('mem'),
        organization_id: alice.orgId,
        email: user.email,
        user_id: user.userId,
        role,
        invited_at: NOW,
        joined_at: NOW,
      })
      .execute();
  const hooks = (pid = projectId) => `/v1/projects/${pid}/webhooks`;
  const create = (user: TestUser | null, body: Record<string, unknown>, pid = projectId) =>
    t.call(user, 'POST', hooks(pid), {
      url: 'https://hooks.example.com/slipway',
      events: ['deployment.success'],
      secret: SECRET,
      ...body,
    });

  beforeAll(async () => {
    clock = new ManualClock(NOW);
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    dev = await t.user('dev@example.com');
    viewer = await t.user('viewer@example.com');
    mallory = await t.user('mallory@example.com');
    await addMember(dev, 'developer');
    await addMember(viewer, 'viewer');
    projectId = await createProject('hooked');
    otherProjectId = await createProject('elsewhere');
  });
  afterAll(() => t.close());

  describe('create', () => {
    it('answers 201 without the secret, and stores the secret encrypted', async () => {
      const res = await create(alice, {
        events: ['deployment.success', 'deployment.failed', 'deployment.success'],
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        data: {
          id: expect.stringMatching(/^whk_[a-z0-9]{20}$/),
          url: 'https://hooks.example.com/slipway',
          events: ['deployment.success', 'deployment.failed'],
          active: true,
          createdAt: NOW,
        },
      });
      expect(res.text).not.toContain(SECRET);
      const row = await t.deps.db
        .selectFrom('webhooks')
        .selectAll()
        .where('id', '=', res.body.data.id)
        .executeTakeFirstOrThrow();
      expect(row.secret_ciphertext).not.toContain(SECRET);
      expect(t.deps.cipher.decrypt(row.secret_ciphertext)).toBe(SECRET);
      expect(row.project_id).toBe(projectId);
    });

    it('accepts every event of the contract and http URLs, from a developer', async () => {
      const all = [
        'deployment.created',
        'deployment.building',
        'deployment.deploying',
        'deployment.success',
        'deployment.failed',
        'deployment.promoted',
        'domain.verified',
        'domain.ssl.issued',
      ];
      const res = await create(dev, { url: 'http://127.0.0.1:9000/hook', events: all });
      expect(res.status).toBe(201);
      expect(res.body.data.events).toEqual(all);
    });

    it('names each bad field', async () => {
      const cases: [Record<string, unknown>, string[]][] = [
        [{ events: ['deployment.nope'] }, ['events.0']],
        [{ events: ['deployment.success', 'deployment.rolledback'] }, ['events.1']],
        [{ events: [] }, ['events']],
        [{ events: 'deployment.success' }, ['events']],
        [{ url: 'ftp://example.com/hook' }, ['url']],
        [{ url: 'not a url' }, ['url']],
        [{ secret: 'too-short' }, ['secret']],
        [{ active: false }, ['active']],
        [{ url: 'javascript:alert(1)', secret: 'x', extra: 1 }, ['extra', 'secret', 'url']],
      ];
      for (const [body, paths] of cases) {
        const res = await create(alice, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(res.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(paths);
      }
      const missing = await t.call(alice, 'POST', hooks(), { events: ['deployment.success'] });
      expect(missing.status).toBe(400);
      expect(missing.body.error.details).toEqual(
        expect.arrayContaining([
          { path: 'url', message: 'is required' },
          { path: 'secret', message: 'is required' },
        ]),
      );
    });

    it('needs a token, a developer role, and membership', async () => {
      const none = await create(null, {});
      expect(none.status).toBe(401);
      expect(none.body.error.code).toBe('UNAUTHORIZED');
      const low = await create(viewer, {});
      expect(low.status).toBe(403);
      expect(low.body.error.code).toBe('FORBIDDEN');
      const other = await create(mallory, {});
      expect(other.status).toBe(404);
      expect(other.body.error.code).toBe('NOT_FOUND');
    });
  });

  describe('list and delete', () => {
    let pid: string;
    const ids: string[] = [];

    beforeAll(async () => {
      pid = await createProject('listed');
      for (const n of [1, 2, 3]) {
        clock.advance(1000);
        const res = await create(alice, { url: `https://hooks.example.com/${n}` }, pid);
        ids.push(res.body.data.id);
      }
      clock.set(NOW);
    });

    it('lists newest first for any member, with meta and pagination', async () => {
      const res = await t.call(viewer, 'GET', hooks(pid));
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ page: 1, limit: 10, total: 3, next: null });
      expect(res.body.data.map((w: { id: string }) => w.id)).toEqual([...ids].reverse());
      expect(res.text).not.toContain(SECRET);
      expect(Object.keys(res.body.data[0]).sort()).toEqual(['active', 'createdAt', 'events', 'id', 'url']);
      const page = await t.call(alice, 'GET', `${hooks(pid)}?limit=2&page=2`);
      expect(page.body.meta).toEqual({ page: 2, limit: 2, total: 3, next: null });
      expect(page.body.data.map((w: { id: string }) => w.id)).toEqual([ids[0]]);
      expect((await t.call(alice, 'GET', `${hooks(pid)}?limit=101`)).status).toBe(400);
      expect((await t.call(null, 'GET', hooks(pid))).status).toBe(401);
      expect((await t.call(mallory, 'GET', hooks(pid))).status).toBe(404);
    });

    it('deletes a webhook with its deliveries (developer and up)', async () => {
      const id = ids[0]!;
      await t.deps.db
        .transaction()
        .execute((tx) => recordEvent(tx, t.deps, pid, 'deployment.success', { deploymentId: 'dpl_a' }));
      const [delivery] = await readDeliveries(t.deps.db, { webhookId: id });
      if (!delivery) throw new Error('no delivery recorded');
      await t.deps.db
        .insertInto('webhook_attempts')
        .values({ delivery_id: delivery.id, at: NOW, status_code: 500, duration_ms: 12, error: null })
        .execute();

      expect((await t.call(viewer, 'DELETE', `${hooks(pid)}/${id}`)).status).toBe(403);
      expect((await t.call(mallory, 'DELETE', `${hooks(pid)}/${id}`)).status).toBe(404);
      expect((await t.call(null, 'DELETE', `${hooks(pid)}/${id}`)).status).toBe(401);
      // A webhook id is only found under its own project.
      expect((await t.call(alice, 'DELETE', `${hooks(otherProjectId)}/${id}`)).status).toBe(404);

      const res = await t.call(dev, 'DELETE', `${hooks(pid)}/${id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: `Webhook ${id} deleted` });
      const left = await t.call(alice, 'GET', hooks(pid));
      expect(left.body.data.map((w: { id: string }) => w.id)).not.toContain(id);
      expect(await readDeliveries(t.deps.db, { webhookId: id })).toEqual([]);
      expect(await t.deps.db.selectFrom('jobs').select('id').where('id', '=', delivery.id).execute()).toEqual(
        [],
      );
      const attempts = await t.deps.db
        .selectFrom('webhook_attempts')
        .select('id')
        .where('delivery_id', '=', delivery.id)
        .execute();
      expect(attempts).toEqual([]);
      // The other webhooks' deliveries stay.
      const others = [
        ...(await readDeliveries(t.deps.db, { webhookId: ids[1]! })),
        ...(await readDeliveries(t.deps.db, { webhookId: ids[2]! })),
      ];
      expect(others).toHaveLength(2);
      const again = await t.call(alice, 'DELETE', `${hooks(pid)}/${id}`);
      expect(again.status).toBe(404);
      expect(again.body.error.code).toBe('NOT_FOUND');
      expect((await t.call(alice, 'GET', `${hooks(pid)}/${id}/deliveries`)).status).toBe(404);
    });
  });

  describe('deliveries and redelivery', () => {
    let pid: string;
    let hookId: string;
    let otherHookId: string;
    const deliveryIds: string[] = [];
    const deliveries = (q = '', user: TestUser | null = alice, hook = hookId) =>
      t.call(user, 'GET', `${hooks(pid)}/${hook}/deliveries${q}`);
    const redeliverUrl = (deliveryId: string, hook = hookId) =>
      `${hooks(pid)}/${hook}/deliveries/${deliveryId}/redeliver`;

    beforeAll(async () => {
      clock.set(NOW);
      pid = await createProject('delivering');
      hookId = (await create(alice, { events: ['deployment.created', 'deployment.success'] }, pid)).body.data
        .id;
      otherHookId = (await create(alice, { events: ['deployment.created'] }, pid)).body.data.id;
      for (const event of ['deployment.created', 'deployment.success'] as const) {
        await t.deps.db
          .transaction()
          .execute((tx) =>
            recordEvent(tx, t.deps, pid, event, { deploymentId: 'dpl_1', projectId: pid, status: 'live' }),
          );
        const [row] = await readDeliveries(t.deps.db, { webhookId: hookId, event });
        deliveryIds.push(row!.id);
        clock.advance(1000);
      }
      // The first delivery failed twice, then succeeded.
      await t.deps.db
        .insertInto('webhook_attempts')
        .values([
          {
            delivery_id: deliveryIds[0]!,
            at: '2026-11-22T10:00:00.100Z',
            status_code: 503,
            duration_ms: 40,
            error: null,
          },
          {
            delivery_id: deliveryIds[0]!,
            at: '2026-11-22T10:00:10.100Z',
            status_code: null,
            duration_ms: 10000,
            error: 'timed out after 10 s',
          },
          {
            delivery_id: deliveryIds[0]!,
            at: '2026-11-22T10:01:10.100Z',
            status_code: 200,
            duration_ms: 35,
            error: null,
          },
        ])
        .execute();
      await t.deps.db
        .updateTable('jobs')
        .set({ status: 'done', attempts: 3 })
        .where('id', '=', deliveryIds[0]!)
        .execute();
    });

    it('lists a webhook’s deliveries newest first, with attempts oldest first', async () => {
      const res = await deliveries('', viewer);
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ page: 1, limit: 10, total: 2, next: null });
      expect(res.body.data).toEqual([
        {
          id: deliveryIds[1],
          webhookId: hookId,
          event: 'deployment.success',
          status: 'pending',
          attempts: [],
          nextAttemptAt: '2026-11-22T10:00:01.000Z',
          payload: {
            event: 'deployment.success',
            timestamp: '2026-11-22T10:00:01.000Z',
            data: { deploymentId: 'dpl_1', projectId: pid, status: 'live' },
          },
          createdAt: '2026-11-22T10:00:01.000Z',
        },
        {
          id: deliveryIds[0],
          webhookId: hookId,
          event: 'deployment.created',
          status: 'success',
          attempts: [
            { at: '2026-11-22T10:00:00.100Z', statusCode: 503, durationMs: 40, error: null },
            {
              at: '2026-11-22T10:00:10.100Z',
              statusCode: null,
              durationMs: 10000,
              error: 'timed out after 10 s',
            },
            { at: '2026-11-22T10:01:10.100Z', statusCode: 200, durationMs: 35, error: null },
          ],
          nextAttemptAt: null,
          payload: {
            event: 'deployment.created',
            timestamp: NOW,
            data: { deploymentId: 'dpl_1', projectId: pid, status: 'live' },
          },
          createdAt: NOW,
        },
      ]);
      const page = await deliveries('?limit=1&page=2');
      expect(page.body.meta).toEqual({ page: 2, limit: 1, total: 2, next: null });
      expect(page.body.data.map((d: { id: string }) => d.id)).toEqual([deliveryIds[0]]);
      expect((await deliveries('?page=0')).status).toBe(400);
      expect((await deliveries('', null)).status).toBe(401);
      expect((await deliveries('', mallory)).status).toBe(404);
      expect((await deliveries('', alice, 'whk_doesnotexist00000000')).status).toBe(404);
    });

    it('redelivers as a new pending delivery with a fresh timestamp and wakes the worker', async () => {
      clock.set('2026-11-22T12:00:00.000Z');
      const woken: string[] = [];
      const stop = t.deps.queue.onNotify((kind) => woken.push(kind));
      const res = await t.call(dev, 'POST', redeliverUrl(deliveryIds[0]!));
      stop();
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^whd_[a-z0-9]{20}$/),
        webhookId: hookId,
        event: 'deployment.created',
        status: 'pending',
        attempts: [],
        nextAttemptAt: '2026-11-22T12:00:00.000Z',
        payload: {
          event: 'deployment.created',
          timestamp: '2026-11-22T12:00:00.000Z',
          data: { deploymentId: 'dpl_1', projectId: pid, status: 'live' },
        },
        createdAt: '2026-11-22T12:00:00.000Z',
      });
      expect(res.body.data.id).not.toBe(deliveryIds[0]);
      expect(woken).toEqual([DELIVERY_JOB]);
      const [stored] = await readDeliveries(t.deps.db, { id: res.body.data.id });
      if (!stored) throw new Error('the redelivery was not stored');
      expect(stored).toMatchObject({ status: 'pending', attempt_count: 0, event: 'deployment.created' });
      expect(JSON.parse(stored.payload)).toEqual(res.body.data.payload);
      // The original is untouched and the new one lists first.
      const list = await deliveries();
      expect(list.body.meta.total).toBe(3);
      expect(list.body.data.map((d: { id: string }) => d.id)).toEqual([
        res.body.data.id,
        deliveryIds[1],
        deliveryIds[0],
      ]);
      expect(list.body.data[2].status).toBe('success');
      clock.set(NOW);
    });

    it('refuses viewers, strangers, unknown deliveries and inactive webhooks', async () => {
      const low = await t.call(viewer, 'POST', redeliverUrl(deliveryIds[0]!));
      expect(low.status).toBe(403);
      expect(low.body.error.code).toBe('FORBIDDEN');
      expect((await t.call(mallory, 'POST', redeliverUrl(deliveryIds[0]!))).status).toBe(404);
      expect((await t.call(null, 'POST', redeliverUrl(deliveryIds[0]!))).status).toBe(401);
      const unknown = await t.call(alice, 'POST', redeliverUrl('whd_doesnotexist00000000'));
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('NOT_FOUND');
      // A delivery is only found under its own webhook.
      expect((await t.call(alice, 'POST', redeliverUrl(deliveryIds[0]!, otherHookId))).status).toBe(404);
      const withBody = await t.call(alice, 'POST', redeliverUrl(deliveryIds[0]!), { force: true });
      expect(withBody.status).toBe(400);

      await t.deps.db.updateTable('webhooks').set({ active: 0 }).where('id', '=', hookId).execute();
      const gone = await t.call(alice, 'POST', redeliverUrl(deliveryIds[0]!));
      expect(gone.status).toBe(409);
      expect(gone.body.error.code).toBe('CONFLICT');
      const listed = await t.call(alice, 'GET', hooks(pid));
      expect(listed.body.data.find((w: { id: string }) => w.id === hookId).active).toBe(false);
      await t.deps.db.updateTable('webhooks').set({ active: 1 }).where('id', '=', hookId).execute();
    });
  });
});
