import { sql } from 'kysely';
import type { Deps } from '../platform/deps/deps.ts';
import { GITHUB_EVENT_JOB } from '../features/github/index.ts';
import { DELIVERY_JOB } from '../features/webhooks/index.ts';

/** Rows deleted per statement: short transactions, so a large backlog never holds SQLite's lock long. */
const BATCH = 1000;

/**
 * Deletes jobs that finished (`done` or `failed`) more than `SLIPWAY_JOB_RETENTION` ago, in
 * batches, through the partial index `jobs_finished`. Nothing reads a finished job: a deployment
 * keeps its own status and log, so the table holds only open jobs and recent history. The GitHub
 * App's events keep to their own week (pruneGitHubEvents): a kept event is what recognises a replay.
 * Webhook deliveries are kept until their webhook is deleted, as before they were jobs: the
 * deliveries list shows them with their attempts.
 */
export async function pruneFinishedJobs(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - deps.config.jobRetentionMs).toISOString();
  let total = 0;
  for (;;) {
    const res = await deps.db
      .deleteFrom('jobs')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('jobs')
          .select('id')
          .where(sql<boolean>`status in ('done', 'failed')`)
          .where('updated_at', '<', before)
          .where('kind', 'not in', [GITHUB_EVENT_JOB, DELIVERY_JOB])
          .limit(BATCH),
      )
      .executeTakeFirst();
    const n = Number(res.numDeletedRows);
    total += n;
    if (n < BATCH) return total;
  }
}
