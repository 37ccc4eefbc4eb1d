import { afterEach, describe, expect, it } from 'vitest';
import { pruneFinishedJobs } from '../../server/schedule/prune-jobs.ts';
import { DELIVERY_JOB } from '../../server/features/webhooks/delivery-job.ts';
import { startWorker, type Worker } from '../../server/platform/jobs/worker.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';

describe('durable job queue', () => {
  let t: TestApp | undefined;
  let w: Worker | undefined;
  afterEach(async () => {
    await w?.stop(100);
    await t?.close();
    w = t = undefined;
  });

  const jobRow = (id: string) =>
    t!.deps.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('runs an enqueued job once, woken without waiting for the poll', async () => {
    t = await createTestApp();
    const seen: string[] = [];
    w = startWorker(
      t.deps,
      [
        {
          kind: 'test.echo',
          concurrency: 1,
          handle: async (job) => void seen.push(JSON.parse(job.payload).n),
        },
      ],
      { pollMs: 60_000 },
    );
    const started = Date.now();
    const id = await t.deps.queue.enqueue(t.deps.db, 'test.echo', { n: 'one' });
    t.deps.queue.notify('test.echo');
    while (seen.length === 0 && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 5));
    await w.idle();
    expect(seen).toEqual(['one']);
    // Far below the 60 s poll: the wake-up, not the poll, ran it.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect((await jobRow(id)).status).toBe('done');
  });

  it('keeps a wake-up that arrives while a claim is in flight', async () => {
    t = await createTestApp();
    const real = t.deps.queue;
    let releaseFirst!: () => void;
    const firstGate = new Promise<void>((r) => (releaseFirst = r));
    let claims = 0;
    let firstClaimStarted!: () => void;
    const inFirstClaim = new Promise<void>((r) => (firstClaimStarted = r));
    // The first claim read the table before the job existed: it finds nothing, after the notify.
    const queue = {
      ...real,
      claim: async (kinds: string[], worker: string, leaseMs: number) => {
        if (++claims === 1) {
          firstClaimStarted();
          await firstGate;
          return null;
        }
        return real.claim(kinds, worker, leaseMs);
      },
    };
    const seen: string[] = [];
    w = startWorker(
      { ...t.deps, queue },
      [{ kind: 'test.race', concurrency: 1, handle: async () => void seen.push('ran') }],
      { pollMs: 60_000 },
    );
    await inFirstClaim;
    await real.enqueue(t.deps.db, 'test.race', {});
    real.notify('test.race');
    releaseFirst();
    const started = Date.now();
    while (seen.length === 0 && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 5));
    expect(seen).toEqual(['ran']);
    expect(claims).toBeGreaterThanOrEqual(2);
  });

  it('claims a job whose worker died once its lease runs out, then gives up after max attempts', async () => {
    const clock = new ManualClock();
    t = await createTestApp({ clock });
    const q = t.deps.queue;
    const id = await q.enqueue(t.deps.db, 'test.crash', {}, { maxAttempts: 2 });
    const first = await q.claim(['test.crash'], 'worker-a', 60_000);
    expect(first?.attempts).toBe(1);
    // Nobody else gets it while the lease holds.
    expect(await q.claim(['test.crash'], 'worker-b', 60_000)).toBeNull();
    clock.advance(61_000);
    const second = await q.claim(['test.crash'], 'worker-b', 60_000);
    expect(second?.id).toBe(id);
    expect(second?.attempts).toBe(2);
    // The interrupted attempt could not say why it ended: the claim does.
    expect((await jobRow(id)).last_error).toMatch(/^lease expired: worker-a held it until /);
    // worker-a's late completion does not count: the job is worker-b's now.
    await q.complete(id, 'worker-a');
    expect((await jobRow(id)).status).toBe('running');
    clock.advance(61_000);
    const exhausted: string[] = [];
    w = startWorker(
      t.deps,
      [
        {
          kind: 'test.crash',
          concurrency: 1,
          handle: async () => {
            throw new Error('should not run a third time');
          },
          onExhausted: async (_job, reason) => void exhausted.push(reason),
        },
      ],
      { pollMs: 20 },
    );
    const deadline = Date.now() + 5000;
    while ((await jobRow(id)).status !== 'failed' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect((await jobRow(id)).status).toBe('failed');
    expect(exhausted).toHaveLength(1);
    expect(exhausted[0]).toMatch(/interrupted 2 times/);
  });

  it('retries a failing job later, then records the error', async () => {
    const clock = new ManualClock();
    t = await createTestApp({ clock });
    let calls = 0;
    const failures: string[] = [];
    w = startWorker(
      t.deps,
      [
        {
          kind: 'test.fail',
          concurrency: 1,
          retryDelayMs: () => 1000,
          handle: async () => {
            calls++;
            throw new Error(`boom ${calls}`);
          },
          onExhausted: async (_job, reason) => void failures.push(reason),
        },
      ],
      { pollMs: 20 },
    );
    const id = await t.deps.queue.enqueue(t.deps.db, 'test.fail', {}, { maxAttempts: 2 });
    const waitFor = async (cond: () => Promise<boolean>) => {
      const deadline = Date.now() + 5000;
      while (!(await cond()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    };
    await waitFor(async () => calls === 1 && (await jobRow(id)).status === 'queued');
    expect((await jobRow(id)).last_error).toBe('boom 1');
    clock.advance(1500);
    await waitFor(async () => (await jobRow(id)).status === 'failed');
    expect(calls).toBe(2);
    expect(failures).toEqual(['boom 2']);
  });

  it('stops a run whose lease was taken over, and leaves the job to its new holder', async () => {
    t = await createTestApp();
    const q = t.deps.queue;
    let aborted: unknown;
    let finished = false;
    const started = new Promise<void>((resolve) => {
      w = startWorker(
        t!.deps,
        [
          {
            kind: 'test.long',
            concurrency: 1,
            // Renewed every 400 ms: the takeover is seen within one renewal, while the lease it
            // last renewed still holds, so the claim round of `idle()` cannot take the job back.
            leaseMs: 1200,
            handle: (_job, signal) =>
              new Promise<void>((_, reject) => {
                resolve();
                signal.addEventListener('abort', () => {
                  aborted = signal.reason;
                  reject(new Error('stopped'));
                });
              }).finally(() => (finished = true)),
            onExhausted: async () => {
              throw new Error('must not give up a job it no longer holds');
            },
          },
        ],
        { pollMs: 60_000 },
      );
    });
    const id = await q.enqueue(t.deps.db, 'test.long', {}, { maxAttempts: 1 });
    q.notify('test.long');
    await started;
    // Another worker takes it over, as one would after the lease ran out unrenewed.
    await t.deps.db
      .updateTable('jobs')
      .set({ locked_by: 'worker-b', attempts: 2 })
      .where('id', '=', id)
      .execute();
    const deadline = Date.now() + 5000;
    while (!finished && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(String(aborted)).toMatch(/lease of this job was lost/);
    await w!.idle();
    // Still worker-b's, running: the stopped run neither failed nor requeued it.
    const row = await jobRow(id);
    expect([row.status, row.locked_by, row.last_error]).toEqual(['running', 'worker-b', null]);
  });

  it('deletes finished jobs past SLIPWAY_JOB_RETENTION in batches, and never an open one', async () => {
    const clock = new ManualClock();
    t = await createTestApp({ clock, env: { SLIPWAY_JOB_RETENTION: '2d' } });
    const q = t.deps.queue;
    const finish = async (kind: string, how: 'done' | 'failed') => {
      const id = await q.enqueue(t!.deps.db, kind, {});
      const job = await q.claim([kind], 'w', 60_000);
      expect(job?.id).toBe(id);
      if (how === 'done') await q.complete(id, 'w');
      else await q.fail(id, 'w', 'broke', null);
      return id;
    };
    // 2,500 old finished jobs: more than two batches. Ten finish through the queue; the rest are
    // copies of those rows under new ids, written in bulk (the same rows, without 7,500 round trips).
    const real: string[] = [];
    for (let i = 0; i < 10; i++) real.push(await finish('test.old', i % 5 === 0 ? 'failed' : 'done'));
    const rows = await t.deps.db.selectFrom('jobs').selectAll().where('id', 'in', real).execute();
    expect(rows.map((r) => r.status).sort()).toEqual([...Array(8).fill('done'), 'failed', 'failed']);
    const copies = Array.from({ length: 2490 }, (_, i) => ({
      ...rows[i % rows.length]!,
      id: `job_copy${i}`,
    }));
    for (let i = 0; i < copies.length; i += 250) {
      await t.deps.db
        .insertInto('jobs')
        .values(copies.slice(i, i + 250))
        .execute();
    }
    // Webhook deliveries are kept until their webhook goes (the deliveries list shows them).
    const delivered = await finish(DELIVERY_JOB, 'done');
    const stillQueued = await q.enqueue(
      t.deps.db,
      'test.waiting',
      {},
      { runAt: new Date(clock.now().getTime() + 864e6) },
    );
    clock.advance(3 * 86_400_000);
    const recent = await finish('test.recent', 'done');
    expect(await pruneFinishedJobs(t.deps)).toBe(2500);
    const left = await t.deps.db.selectFrom('jobs').select(['id', 'status']).orderBy('id').execute();
    expect(left.map((j) => j.id).sort()).toEqual([delivered, stillQueued, recent].sort());
    expect(await pruneFinishedJobs(t.deps)).toBe(0);
    // The claim still finds the open job when it is due.
    clock.advance(864e6);
    expect((await q.claim(['test.waiting'], 'w', 60_000))?.id).toBe(stillQueued);
  });
});
