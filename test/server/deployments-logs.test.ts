import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../server/core/ids.ts';
import { appendLog } from '../../server/features/deployments/deployment-logs.ts';
import {
  markBuilding,
  markDeploying,
  markFailed,
  markLive,
} from '../../server/features/deployments/deployment-state.ts';
import { logFrames } from '../../server/features/deployments/log-frames.ts';
import { sendEventStream } from '../../server/platform/http/sse.ts';
import {
  onDeploymentActivity,
  signalDeployment,
} from '../../server/features/deployments/deployment-activity.ts';
import { logEvents } from '../../server/features/deployments/follow-logs.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { addMember } from '../helpers/members.ts';

interface SseEvent {
  id?: string;
  event?: string;
  data: string[];
}

/** Splits an event-stream into events; comment lines (heartbeats) are dropped. */
function parseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.split('\n').some((l) => l !== '' && !l.startsWith(':')))
    .map((block) => {
      const ev: SseEvent = { data: [] };
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) ev.id = line.slice(4);
        else if (line.startsWith('event: ')) ev.event = line.slice(7);
        else if (line.startsWith('data: ')) ev.data.push(line.slice(6));
      }
      return ev;
    });
}

/** A streaming GET whose body is read as it arrives. */
async function openStream(url: string, headers: Record<string, string>) {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let done = false;
  let pending: ReturnType<typeof reader.read> | undefined;
  return {
    res,
    abort: () => abort.abort(),
    get done() {
      return done;
    },
    /** Reads until `pred(text)` holds, the stream ends, or `timeoutMs` passes. */
    async until(pred: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      while (!pred(text) && !done) {
        const left = deadline - Date.now();
        if (left <= 0) break;
        pending ??= reader.read();
        const r = await Promise.race([
          pending,
          new Promise<'timeout'>((ok) => setTimeout(() => ok('timeout'), left)),
        ]);
        if (r === 'timeout') break;
        pending = undefined;
        if (r.done) done = true;
        else text += decoder.decode(r.value, { stream: true });
      }
      if (!pred(text)) throw new Error(`stream did not match in ${timeoutMs} ms; got:\n${text}`);
      return text;
    },
  };
}

const lines = (text: string) =>
  parseEvents(text)
    .filter((e) => !e.event)
    .flatMap((e) => e.data);

describe('deployment logs', () => {
  let t: TestApp;
  let alice: TestUser;
  let mallory: TestUser;
  let viewer: TestUser;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
    mallory = await t.user('mallory@example.com');
    viewer = await t.user('viewer@example.com');
    const now = new Date().toISOString();
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
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(() => t.close());

  let projectCount = 0;
  async function deployment(): Promise<string> {
    const p = await t.call(alice, 'POST', '/v1/projects', {
      name: `logs-${++projectCount}`,
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
    });
    const d = await t.call(alice, 'POST', `/v1/projects/${p.body.data.id}/deployments`, {});
    expect(d.status).toBe(201);
    return d.body.data.id as string;
  }

  const auth = (user: TestUser) => ({ authorization: `Bearer ${user.token}` });

  describe('reading', () => {
    let id: string;

    beforeAll(async () => {
      id = await deployment();
      await appendLog(t.deps, id, 'build', ['Cloning repository', '  Detected framework: vite  ']);
      await appendLog(t.deps, id, 'build', ['step 1\nstep 2\n', 'done']);
      await appendLog(t.deps, id, 'runtime', ['listening on 3000']);
      await appendLog(t.deps, id, 'build', []);
    });

    it('answers the build log by default, each stored line as it is', async () => {
      const res = await t.call(viewer, 'GET', `/v1/deployments/${id}/logs`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          type: 'build',
          logs: 'Cloning repository\n  Detected framework: vite  \nstep 1\nstep 2\ndone',
        },
      });
    });

    it('keeps the last `tail` lines of the asked type', async () => {
      const tail = await t.call(alice, 'GET', `/v1/deployments/${id}/logs?tail=2`);
      expect(tail.body.data.logs).toBe('step 2\ndone');
      const runtime = await t.call(alice, 'GET', `/v1/deployments/${id}/logs?type=runtime&tail=10000`);
      expect(runtime.body.data).toEqual({ type: 'runtime', logs: 'listening on 3000' });
      const error = await t.call(alice, 'GET', `/v1/deployments/${id}/logs?type=error`);
      expect(error.body.data).toEqual({ type: 'error', logs: '' });
    });

    it('keeps only the default 100 lines', async () => {
      const big = await deployment();
      await appendLog(
        t.deps,
        big,
        'build',
        Array.from({ length: 150 }, (_, i) => `line ${i}`),
      );
      const res = await t.call(alice, 'GET', `/v1/deployments/${big}/logs`);
      const got = (res.body.data.logs as string).split('\n');
      expect(got).toHaveLength(100);
      expect(got[0]).toBe('line 50');
      expect(got[99]).toBe('line 149');
    });

    it('rejects bad queries', async () => {
      for (const q of [
        'tail=0',
        'tail=10001',
        'tail=1.5',
        'tail=abc',
        'type=bogus',
        'follow=yes',
        'lines=3',
      ]) {
        const res = await t.call(alice, 'GET', `/v1/deployments/${id}/logs?${q}`);
        expect(res.status, q).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
      }
    });

    it('needs a token and membership', async () => {
      expect((await t.call(null, 'GET', `/v1/deployments/${id}/logs`)).status).toBe(401);
      const stranger = await t.call(mallory, 'GET', `/v1/deployments/${id}/logs`);
      expect(stranger.status).toBe(404);
      expect(stranger.body.error.code).toBe('NOT_FOUND');
      expect((await t.call(alice, 'GET', '/v1/deployments/dpl_doesnotexist000000/logs')).status).toBe(404);
    });
  });

  describe('following', () => {
    it('streams the tail, then new lines as they come, then the final state', async () => {
      const id = await deployment();
      await markBuilding(t.deps, id);
      await appendLog(t.deps, id, 'build', ['one', 'two', 'three']);
      await appendLog(t.deps, id, 'runtime', ['not this log']);

      const stream = await openStream(`${base}/v1/deployments/${id}/logs?follow=true&tail=2`, {
        ...auth(viewer),
        'x-request-id': 'follow-test-1',
      });
      expect(stream.res.status).toBe(200);
      expect(stream.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(stream.res.headers.get('cache-control')).toBe('no-cache, no-transform');
      expect(stream.res.headers.get('x-request-id')).toBe('follow-test-1');
      expect(stream.res.headers.get('x-ratelimit-limit')).toBe('100');
      await stream.until((s) => lines(s).length === 2);

      // The append wakes the stream at once; without the wake-up it would still come by polling.
      await appendLog(t.deps, id, 'build', ['four']);
      await stream.until((s) => lines(s).includes('four'), 2000);
      // A row holding a line break travels as one event with two data fields.
      await t.deps.db
        .insertInto('deployment_logs')
        .values({ deployment_id: id, type: 'build', at: new Date().toISOString(), line: 'multi\nline' })
        .execute();
      await stream.until((s) => lines(s).includes('line'), 2000);

      await markDeploying(t.deps, id, { buildDurationMs: 10, artifactId: 'a' });
      await appendLog(t.deps, id, 'build', ['five']);
      await markLive(t.deps, id, { deployDurationMs: 5 });
      const text = await stream.until((s) => s.includes('event: end'));
      const events = parseEvents(text);
      expect(lines(text)).toEqual(['two', 'three', 'four', 'multi', 'line', 'five']);
      const end = events.at(-1)!;
      expect(end.event).toBe('end');
      expect(JSON.parse(end.data.join('\n'))).toEqual({ status: 'live', errorMessage: null });
      // Ids increase, so a client can resume with Last-Event-ID.
      const ids = events.filter((e) => !e.event).map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      await stream.until(() => stream.done);
    });

    it('ends at once for a finished deployment and resumes after Last-Event-ID', async () => {
      const id = await deployment();
      await appendLog(t.deps, id, 'build', ['a', 'b', 'c']);
      await markFailed(t.deps, id, 'Build failed: exit code 1');
      const stream = await openStream(`${base}/v1/deployments/${id}/logs?follow=true`, auth(alice));
      const text = await stream.until(() => stream.done);
      const events = parseEvents(text);
      expect(lines(text)).toEqual(['a', 'b', 'c']);
      expect(JSON.parse(events.at(-1)!.data[0]!)).toEqual({
        status: 'failed',
        errorMessage: 'Build failed: exit code 1',
      });

      const resumed = await openStream(`${base}/v1/deployments/${id}/logs?follow=true`, {
        ...auth(alice),
        'last-event-id': events[0]!.id!,
      });
      const rest = await resumed.until(() => resumed.done);
      expect(lines(rest)).toEqual(['b', 'c']);
      expect(rest).toContain('event: end');
    });

    it('ends a stream within seconds once its reader is removed from the organization or its token revoked', async () => {
      const id = await deployment();
      await markBuilding(t.deps, id);
      const url = `${base}/v1/deployments/${id}/logs?follow=true`;
      const removed = await t.user();
      const revoked = await t.user();
      for (const u of [removed, revoked]) await addMember(t, alice.orgId, u, 'viewer');
      const a = await openStream(url, auth(removed));
      const b = await openStream(url, auth(revoked));
      expect([a.res.status, b.res.status]).toEqual([200, 200]);
      await appendLog(t.deps, id, 'build', ['before']);
      await Promise.all([
        a.until((s) => lines(s).includes('before')),
        b.until((s) => lines(s).includes('before')),
      ]);

      const removal = await t.call(
        alice,
        'DELETE',
        `/v1/organizations/${alice.orgId}/members/${removed.email}`,
      );
      expect(removal.status).toBe(200);
      const tokens = await t.call(revoked, 'GET', '/v1/user/tokens');
      const revocation = await t.call(revoked, 'DELETE', `/v1/user/tokens/${tokens.body.data[0].id}`);
      expect(revocation.status).toBe(200);
      await appendLog(t.deps, id, 'build', ['after']);

      // Access is checked again every five seconds: both streams end well within eight.
      const [endA, endB] = await Promise.all([a.until(() => a.done, 8000), b.until(() => b.done, 8000)]);
      expect(endA).toContain(': no longer a member of the organization\n\n');
      expect(endB).toContain(': the token was revoked\n\n');
      // A reconnection gets the API's answer in words.
      expect((await fetch(url, { headers: auth(removed) })).status).toBe(404);
      expect((await fetch(url, { headers: auth(revoked) })).status).toBe(401);
      // The deployment's other readers go on.
      const stays = await openStream(url, auth(alice));
      await stays.until((s) => lines(s).includes('after'));
      stays.abort();
    }, 20_000);

    it('answers errors as JSON before the stream starts', async () => {
      const id = await deployment();
      const url = `${base}/v1/deployments/${id}/logs?follow=true`;
      const stranger = await fetch(url, { headers: auth(mallory) });
      expect(stranger.status).toBe(404);
      expect(stranger.headers.get('content-type')).toMatch(/^application\/json/);
      expect(((await stranger.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(`${url}&tail=0`, { headers: auth(alice) })).status).toBe(400);
    });

    it('wakes on appends in this process, sends heartbeats and stops when the client goes away', async () => {
      const id = await deployment();
      await appendLog(t.deps, id, 'build', ['waiting']);
      let streaming: Promise<void> | undefined;
      const server: Server = createServer((_req, res) => {
        streaming = sendEventStream(
          res,
          // Polling this rarely, only the in-process wake-up can deliver the next line in time.
          (signal) => logFrames(logEvents(t.deps, id, { type: 'build', tail: 10, pollMs: 60_000 }, signal)),
          { heartbeatMs: 30, log: t.deps.log },
        );
      });
      await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
      try {
        const port = (server.address() as AddressInfo).port;
        const stream = await openStream(`http://127.0.0.1:${port}/`, {});
        const text = await stream.until((s) => s.includes(': heartbeat\n\n'));
        expect(lines(text)).toEqual(['waiting']);
        await appendLog(t.deps, id, 'build', ['woken']);
        await stream.until((s) => lines(s).includes('woken'), 20_000);
        stream.abort();
        const ended = await Promise.race([
          streaming!.then(() => 'ended'),
          new Promise((ok) => setTimeout(() => ok('still running'), 20_000)),
        ]);
        expect(ended).toBe('ended');
      } finally {
        server.closeAllConnections();
        await new Promise((ok) => server.close(ok));
      }
    });
  });
});

// Two services on one PostgreSQL database, as two processes are: the wake-up crosses by NOTIFY.
// SQLite is one process, where the in-process wake-up above covers it.
describe.skipIf(testDialect() !== 'postgres')('deployment logs across processes (PostgreSQL)', () => {
  it("wakes a follower in one process on another process's append, without waiting for the poll", async () => {
    const a = await createTestApp();
    const b = await createTestApp({ dataDir: a.dataDir });
    try {
      const user = await a.user('logs-across@example.com');
      const p = await a.call(user, 'POST', '/v1/projects', {
        name: 'across',
        repositoryUrl: 'https://example.com/repo.git',
        organizationId: user.orgId,
      });
      const d = await a.call(user, 'POST', `/v1/projects/${p.body.data.id}/deployments`, {});
      const id = d.body.data.id as string;
      // Wait until a's LISTEN on the channel is live: b signals until a hears it.
      let heard = false;
      const probe = onDeploymentActivity(a.deps, 'dpl_probe', () => (heard = true));
      for (let i = 0; i < 400 && !heard; i++) {
        signalDeployment(b.deps, 'dpl_probe');
        await new Promise((r) => setTimeout(r, 50));
      }
      probe();
      expect(heard).toBe(true);
      const abort = new AbortController();
      // Polling once a minute: only the notification can bring the line within the wait below.
      const events = logEvents(a.deps, id, { type: 'build', tail: 10, pollMs: 60_000 }, abort.signal);
      const first = events.next(); // reads the (empty) history, then rests
      await new Promise((r) => setTimeout(r, 200));
      await appendLog(b.deps, id, 'build', ['from process b']);
      const started = Date.now();
      const got = await first;
      abort.abort();
      expect(got.value).toMatchObject({ type: 'lines', lines: [{ line: 'from process b' }] });
      expect(Date.now() - started).toBeLessThan(30_000);
      await events.return(undefined);
    } finally {
      await b.close();
      await a.close();
    }
  });
});
