import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobQueue } from '../../../server/platform/queue/queue.ts';
import { systemClock } from '../../../server/core/clock.ts';
import { createCipher } from '../../../server/core/secrets.ts';
import {
  onRoutingChange,
  ROUTING_CHANNEL,
  signalRoutingChange,
} from '../../../server/platform/deps/routing-signal.ts';
import { openStore, type Store } from '../../../server/platform/store/db.ts';
import { JOBS_CHANNEL } from '../../../server/platform/store/notify.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createTestDatabase, terminateBackends, type TestDatabase } from '../../helpers/database.ts';

const url = process.env.SLIPWAY_TEST_DATABASE_URL;

/** Two stores on one database stand for two processes: each has its own pool and listener. */
describe.skipIf(!url)(
  `LISTEN/NOTIFY between processes${url ? '' : ' (skipped: SLIPWAY_TEST_DATABASE_URL is not set)'}`,
  () => {
    let database: TestDatabase;
    let a: Store;
    let b: Store;
    beforeAll(async () => {
      database = await createTestDatabase();
      a = openStore({ databaseUrl: database.url, dataDir: '/nonexistent', poolSize: 2 });
      b = openStore({ databaseUrl: database.url, dataDir: '/nonexistent', poolSize: 2 });
      await a.migrate(createCipher(Buffer.alloc(32, 7)));
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await database?.drop();
    });

    const next = (store: Store, channel: string) =>
      new Promise<{ payload: string | null; at: number }>((resolve) => {
        const off = store.notifier.subscribe(channel, (payload) => {
          off();
          resolve({ payload, at: Date.now() });
        });
      });

    it('delivers a routing change to another process', async () => {
      const heard = next(b, ROUTING_CHANNEL);
      await b.notifier.ready();
      const sent = Date.now();
      a.notifier.publish(ROUTING_CHANNEL, '');
      const { payload, at } = await heard;
      expect(payload).toBe('');
      // Milliseconds in practice; the bound only says it came by notification, not by a retry.
      expect(at - sent).toBeLessThan(10_000);
    });

    it("tells another process's edge which project's routes changed; no project means all", async () => {
      const heard: (string | null)[] = [];
      const off = onRoutingChange({ store: b }, (projectId) => heard.push(projectId));
      try {
        await b.notifier.ready();
        a.notifier.publish(ROUTING_CHANNEL, 'prj_one');
        await waitFor('the project id', () => heard.length === 1);
        // A process that names no project (an older version): every route may have changed.
        a.notifier.publish(ROUTING_CHANNEL, '');
        await waitFor('the second signal', () => heard.length === 2);
        expect(heard).toEqual(['prj_one', null]);
      } finally {
        off();
      }
    });

    it('tells this process’s edge of its own routing change before returning, once, and the others by NOTIFY', async () => {
      const here: (string | null)[] = [];
      const there: (string | null)[] = [];
      const offHere = onRoutingChange({ store: a }, (projectId) => here.push(projectId));
      const offThere = onRoutingChange({ store: b }, (projectId) => there.push(projectId));
      try {
        await Promise.all([a.notifier.ready(), b.notifier.ready()]);
        signalRoutingChange({ store: a }, 'prj_here');
        expect(here).toEqual(['prj_here']);
        await waitFor('the other process', () => there.length === 1);
        expect(there).toEqual(['prj_here']);
        // Notifications arrive in commit order: the echo of the first comes before this one.
        signalRoutingChange({ store: b }, 'prj_there');
        await waitFor('the other process’s change', () => here.length === 2);
        expect(here).toEqual(['prj_here', 'prj_there']);
        expect(there).toEqual(['prj_here', 'prj_there']);
      } finally {
        offHere();
        offThere();
      }
    });

    it('is ready only once a channel subscribed on the open connection is listened to', async () => {
      // A process whose commands reach the database 300 ms late: a NOTIFY sent as soon as it is
      // ready would overtake a LISTEN still on its way, and never be heard.
      const proxy = await delayingProxy(new URL(database.url), 300);
      const slowUrl = new URL(database.url);
      slowUrl.host = `127.0.0.1:${proxy.port}`;
      const slow = openStore({ databaseUrl: slowUrl.toString(), dataDir: '/nonexistent', poolSize: 1 });
      try {
        const offFirst = slow.notifier.subscribe('slipway_ready_first', () => undefined);
        await slow.notifier.ready();
        offFirst();
        const heard = next(slow, 'slipway_ready_second');
        await slow.notifier.ready();
        a.notifier.publish('slipway_ready_second', 'heard');
        const lost = new Promise<string>((r) => setTimeout(() => r('lost'), 3000).unref());
        expect(await Promise.race([heard.then((h) => h.payload), lost])).toBe('heard');
      } finally {
        await slow.close();
        await proxy.close();
      }
    });

    it("wakes another process's job listeners with the kind that was enqueued", async () => {
      const qa = createJobQueue(a.db, a.dialect, systemClock, a.notifier);
      const qb = createJobQueue(b.db, b.dialect, systemClock, b.notifier);
      const kinds: string[] = [];
      const off = qb.onNotify((kind) => kinds.push(kind));
      await b.notifier.ready();
      qa.notify('build');
      qa.notify('webhook.deliver');
      const deadline = Date.now() + 20_000;
      while (kinds.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      off();
      // Two NOTIFYs through two pooled connections may arrive in either order.
      expect(kinds.sort()).toEqual(['build', 'webhook.deliver']);
    });

    it('reconnects after the database drops its connection, telling listeners they may have missed some', async () => {
      // Subscribe before the cut so the listener connection exists.
      await b.notifier.ready();
      const missed = next(b, JOBS_CHANNEL);
      expect(await terminateBackends(database.name)).toBeGreaterThan(0);
      expect((await missed).payload).toBeNull();
      await b.notifier.ready();
      const heard = next(b, JOBS_CHANNEL);
      // The pool behind `a` lost its connections too; the next NOTIFY goes through a new one.
      a.notifier.publish(JOBS_CHANNEL, 'build');
      expect((await heard).payload).toBe('build');
    });
  },
);

/** A TCP proxy to `target` that holds what the client sends for `delayMs` (order kept). */
async function delayingProxy(target: URL, delayMs: number) {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk) => setTimeout(() => upstream.write(chunk), delayMs));
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
