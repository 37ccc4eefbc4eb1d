import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startClaimLoop, Stopped, type ClaimLoop, type Lane } from '../../server/platform/jobs/claim-loop.ts';
import type { JobQueue } from '../../server/platform/queue/queue.ts';
import { wakeUp } from '../../server/core/wake-up.ts';
import { waitFor } from '../helpers/wait-for.ts';

interface Item {
  id: string;
}

/** A promise and the function that settles it: what a test releases a run or a claim with. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

describe('the claim loop', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  /** One lane named `test` over an in-memory list of due items; `notify()` wakes it like the queue. */
  function start(lane: Partial<Lane<Item>> = {}, opts: { pollMs?: number; windDownMs?: number } = {}) {
    const bus = new EventEmitter();
    const queue = {
      onNotify: (listener: (kind: string) => void) => {
        bus.on('notify', listener);
        return () => void bus.off('notify', listener);
      },
    } as unknown as JobQueue;
    const due: Item[] = [];
    const ran: string[] = [];
    const released: string[] = [];
    let claims = 0;
    const loop: ClaimLoop = startClaimLoop(
      { log: pino({ level: 'silent' }), queue },
      [
        {
          name: 'test',
          room: (running) => 1 - running,
          claim: async (limit) => (claims++, due.splice(0, limit)),
          run: async (item) => void ran.push(item.id),
          release: async (item) => void released.push(item.id),
          ...lane,
        },
      ],
      // Polling so slow by default that only wake-ups explain prompt work.
      { pollMs: opts.pollMs ?? 60_000, windDownMs: opts.windDownMs ?? 10_000 },
    );
    cleanup.push(() => loop.stop(0));
    return { loop, due, ran, released, claims: () => claims, notify: () => bus.emit('notify', 'test') };
  }

  it('runs work that a notify announces, and work that only a poll finds', async () => {
    const woken = start();
    woken.due.push({ id: 'a' });
    woken.notify();
    await waitFor('the woken run', () => woken.ran.includes('a'));

    const polled = start({}, { pollMs: 20 });
    await waitFor('a first empty claim', () => polled.claims() > 0);
    polled.due.push({ id: 'b' });
    await waitFor('the polled run', () => polled.ran.includes('b'));
  });

  it('keeps a wake-up that arrives while a claim is in flight', async () => {
    const inFirstClaim = gate();
    const firstClaimEnds = gate();
    let claims = 0;
    const due: Item[] = [];
    const t = start({
      claim: async (limit) => {
        // The first claim read the table before the item existed: it finds nothing, after the notify.
        if (++claims === 1) {
          inFirstClaim.open();
          await firstClaimEnds.opened;
          return [];
        }
        return due.splice(0, limit);
      },
    });
    await inFirstClaim.opened;
    due.push({ id: 'late' });
    t.notify();
    firstClaimEnds.open();
    await waitFor('the run', () => t.ran.includes('late'));
    expect(claims).toBeGreaterThanOrEqual(2);
  });

  it('claims up to the room, and again as runs end', async () => {
    const gates = new Map<string, ReturnType<typeof gate>>();
    const t = start({
      room: (running) => 2 - running,
      run: async (item) => {
        t.ran.push(item.id);
        const g = gate();
        gates.set(item.id, g);
        await g.opened;
      },
    });
    t.due.push({ id: '1' }, { id: '2' }, { id: '3' });
    t.notify();
    await waitFor('two runs', () => t.ran.length === 2);
    expect(t.due.map((i) => i.id)).toEqual(['3']);
    gates.get('1')!.open();
    await waitFor('the third run', () => t.ran.length === 3);
    for (const g of gates.values()) g.open();
    await t.loop.idle();
  });

  it('keeps a renewed lease, and aborts the run once a renewal is refused or none comes in time', async () => {
    for (const renewal of ['refused', 'unanswered'] as const) {
      let renewals = 0;
      let reason: unknown;
      const t = start({
        // Renewed every 400 ms (a third of it): 800 ms of slack for a timer late on a loaded
        // machine, where 300 ms (a tick every 250) lost the lease before the first renewal.
        lease: {
          ms: 1200,
          renew: async () => {
            if (++renewals < 5) return true;
            return renewal === 'refused' ? false : new Promise<boolean>(() => undefined);
          },
        },
        run: (_item, signal) =>
          new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => {
              reason = signal.reason;
              resolve();
            }),
          ),
      });
      t.due.push({ id: renewal });
      t.notify();
      await waitFor('four renewals', () => renewals >= 4);
      // 1600 ms in: the run has outlived its first 1200 ms lease, unaborted.
      expect(reason).toBeUndefined();
      await waitFor(`the abort after the ${renewal} renewal`, () => reason);
      expect(String(reason)).toMatch(/lease of this job was lost/);
    }
  });

  it('lets running work finish within the grace period on stop', async () => {
    const finish = gate();
    const order: string[] = [];
    let signal: AbortSignal | undefined;
    const t = start({
      run: async (item, s) => {
        signal = s;
        t.ran.push(item.id);
        await finish.opened;
        order.push('run ended');
      },
    });
    t.due.push({ id: 'a' });
    t.notify();
    await waitFor('the run', () => t.ran.length === 1);
    const stopped = t.loop.stop(30_000).then(() => order.push('stopped'));
    // Time for a stop that does not wait to be done before the run ends.
    setTimeout(finish.open, 50);
    await stopped;
    expect(order).toEqual(['run ended', 'stopped']);
    expect(signal!.aborted).toBe(false);
    expect(t.released).toEqual([]);
  });

  it('aborts work still running after the grace period, and releases what does not wind down', async () => {
    const stubborn = gate();
    const reasons = new Map<string, unknown>();
    const t = start(
      {
        room: (running) => 2 - running,
        run: async (item, signal) => {
          t.ran.push(item.id);
          await new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => {
              reasons.set(item.id, signal.reason);
              // `obliging` winds down (and would hand its item back itself); `stubborn` goes on.
              if (item.id === 'obliging') resolve();
              else void stubborn.opened.then(resolve);
            }),
          );
        },
      },
      { windDownMs: 50 },
    );
    t.due.push({ id: 'obliging' }, { id: 'stubborn' });
    t.notify();
    await waitFor('both runs', () => t.ran.length === 2);
    await t.loop.stop(20);
    expect(reasons.get('obliging')).toBeInstanceOf(Stopped);
    expect(reasons.get('stubborn')).toBeInstanceOf(Stopped);
    expect(t.released).toEqual(['stubborn']);
    stubborn.open();
  });

  it('releases what a claim in flight at stop brought back, without running it', async () => {
    const claiming = gate();
    const claimEnds = gate();
    const t = start({
      claim: async () => {
        claiming.open();
        await claimEnds.opened;
        return [{ id: 'late' }];
      },
    });
    await claiming.opened;
    const stopped = t.loop.stop();
    claimEnds.open();
    await stopped;
    expect(t.ran).toEqual([]);
    expect(t.released).toEqual(['late']);
  });

  it('is idle only after a claim round begun after the call found nothing and nothing runs', async () => {
    const finish = gate();
    const t = start({
      run: async (item) => {
        t.ran.push(item.id);
        await finish.opened;
      },
    });
    await waitFor('a first empty claim', () => t.claims() > 0);
    // Due before idle() was called, never announced: the idle round must find it.
    t.due.push({ id: 'a' });
    let idle = false;
    const idled = t.loop.idle().then(() => (idle = true));
    await waitFor('the run', () => t.ran.length === 1);
    expect(idle).toBe(false);
    finish.open();
    await idled;
    expect(t.due).toEqual([]);
  });
});

describe('wakeUp', () => {
  it('returns from a sleep at a wake-up, at one that came before it, or at an abort, not before', async () => {
    const w = wakeUp();
    let slept = false;
    const sleeping = w.sleep(60_000).then(() => (slept = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(slept).toBe(false);
    w.wake();
    await sleeping;

    // Woken while busy: the next sleep returns at once, until reset.
    w.wake();
    await w.sleep(60_000);
    w.reset();
    const abort = new AbortController();
    const aborted = w.sleep(60_000, abort.signal);
    abort.abort();
    await aborted;
    await w.sleep(10);
  });
});
