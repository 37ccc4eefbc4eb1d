import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { DialectHelpers } from '../store/dialect.ts';
import type { Database } from '../store/schema.ts';

/** What the queue's functions share: the database, its dialect and the clock. */
export interface QueueContext {
  db: Kysely<Database>;
  dialect: DialectHelpers;
  clock: Clock;
}

/** The context's time now, as stored (ISO). */
export const nowIso = (q: QueueContext) => q.clock.now().toISOString();
