import { sql, type Kysely, type Migration } from 'kysely';

interface Tables {
  jobs: { id: string; kind: string; payload: string; status: string; fair_key: string | null };
  deployments: { id: string; project_id: string };
  projects: { id: string; organization_id: string };
}

/**
 * Builds are claimed fairly between organizations (server/platform/queue/fair-claim.ts): each job names its
 * owner (`fair_key`) and when it was last claimed. Open build jobs get their organization here,
 * so a queue that was waiting during the upgrade is shared fairly at once.
 */
export const fairJobs: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('jobs').addColumn('fair_key', 'text').execute();
    await db.schema.alterTable('jobs').addColumn('claimed_at', 'text').execute();
    const d = db as unknown as Kysely<Tables>;
    const open = await d
      .selectFrom('jobs')
      .select(['id', 'payload'])
      .where('kind', '=', 'deployment.build')
      .where(sql<boolean>`status in ('queued', 'running')`)
      .execute();
    for (const job of open) {
      let deploymentId: unknown;
      try {
        deploymentId = (JSON.parse(job.payload) as { deploymentId?: unknown }).deploymentId;
      } catch {
        continue;
      }
      if (typeof deploymentId !== 'string') continue;
      const owner = await d
        .selectFrom('deployments')
        .innerJoin('projects', 'projects.id', 'deployments.project_id')
        .select('projects.organization_id')
        .where('deployments.id', '=', deploymentId)
        .executeTakeFirst();
      if (owner)
        await d
          .updateTable('jobs')
          .set({ fair_key: owner.organization_id })
          .where('id', '=', job.id)
          .execute();
    }
    // An owner's open jobs oldest first, and when it was last served: both read by every fair claim.
    await db.schema
      .createIndex('jobs_open_owner')
      .on('jobs')
      .columns(['fair_key', 'kind', 'run_at'])
      .where(sql.ref('status'), 'in', sql`('queued', 'running')`)
      .execute();
    await db.schema
      .createIndex('jobs_owner_claimed')
      .on('jobs')
      .columns(['fair_key', 'kind', 'claimed_at'])
      .execute();
  },
};
