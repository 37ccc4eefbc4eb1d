import { EventEmitter } from 'node:events';
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { Database } from '../store/schema.ts';
import type { DialectHelpers } from '../store/dialect.ts';
import { JOBS_CHANNEL, type Notifier } from '../store/notify.ts';
import { claimMany } from './claim.ts';
import type { QueueContext } from './context.ts';
import { enqueue, enqueueOnce } from './enqueue.ts';
import { complete, extend, fail, release } from './finish.ts';
import type { JobQueue } from './types.ts';

export {
  LEASE_EXPIRED,
  OPEN,
  type ClaimScope,
  type EnqueueOptions,
  type Job,
  type JobQueue,
} from './types.ts';

// The queue's parts, each over one QueueContext: types.ts (the interface), enqueue.ts, claim.ts
// (which job is next, fairness and ordering keys included) and finish.ts (the end of a claim).
// This file puts them together with the wake-ups.

export function createJobQueue(
  db: Kysely<Database>,
  dialect: DialectHelpers,
  clock: Clock,
  notifier?: Notifier,
): JobQueue {
  const q: QueueContext = { db, dialect, clock };
  const bus = new EventEmitter();
  bus.setMaxListeners(100);
  // Only a cross-process notifier adds anything to the local bus; its echo of our own NOTIFY
  // wakes our workers a second time, which costs one empty claim.
  const remote = notifier?.crossProcess ? notifier : undefined;
  let unlisten: (() => void) | undefined;

  return {
    enqueue: (tx, kind, payload, opts) => enqueue(q, tx, kind, payload, opts),
    enqueueOnce: (tx, kind, payload, opts) => enqueueOnce(q, tx, kind, payload, opts),
    async claim(kinds, workerId, leaseMs, fairness, scope) {
      const [job] = await claimMany(q, kinds, workerId, leaseMs, 1, fairness, scope);
      return job ?? null;
    },
    claimMany: (kinds, workerId, leaseMs, limit, fairness, scope) =>
      claimMany(q, kinds, workerId, leaseMs, limit, fairness, scope),
    extend: (jobId, workerId, leaseMs) => extend(q, jobId, workerId, leaseMs),
    complete: (jobId, workerId) => complete(q, jobId, workerId),
    fail: (jobId, workerId, error, retryAt) => fail(q, jobId, workerId, error, retryAt),
    release: (jobId, workerId) => release(q, jobId, workerId),
    notify(kind) {
      bus.emit('job', kind);
      remote?.publish(JOBS_CHANNEL, kind);
    },
    onNotify(listener) {
      // Listen on the database only once something in this process waits for jobs.
      unlisten ??= remote?.subscribe(JOBS_CHANNEL, (kind) => {
        if (kind) bus.emit('job', kind);
      });
      bus.on('job', listener);
      return () => bus.off('job', listener);
    },
  };
}
