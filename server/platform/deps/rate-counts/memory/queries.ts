import { sql } from 'kysely';
import { prepared } from '../../../store/prepared.ts';

/** A window's stored count. */
export const readRateCount = prepared<[string, number], { count: number }>(2, (d, userId, windowStart) =>
  d
    .selectFrom('rate_limits')
    .select('count')
    .where('user_id', '=', userId)
    .where('window_start', '=', windowStart as unknown as number),
);

/** Adds to a window's count and answers the total; the flush's writes commit together. */
export const add = prepared<[string, number, number], { count: number }>(
  3,
  (d, userId, windowStart, n) =>
    d
      .insertInto('rate_limits')
      .values({
        user_id: userId,
        window_start: windowStart as unknown as number,
        count: n as unknown as number,
      })
      .onConflict((oc) =>
        oc
          .columns(['user_id', 'window_start'])
          .doUpdateSet({ count: sql`rate_limits.count + excluded.count` }),
      )
      .returning('count'),
  { frequentWrite: true },
);
