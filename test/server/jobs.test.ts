import { afterEach, describe, expect, it } from 'vitest';
import { startWorker, type Worker } from '../../server/jobs/worker.ts';
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
    while (seen.length === 0 && Date.now() - started < 5000) await new Promise((r) => setTimeout(r, 5));
    await w.idle();
    expect(seen).toEqual(['one']);
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await jobRow(id)).status).toBe('done');
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
            leaseMs: 300,
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
});
