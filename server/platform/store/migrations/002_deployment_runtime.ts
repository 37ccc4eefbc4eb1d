import type { Kysely, Migration } from 'kysely';

/** How the edge serves a deployment: `{ kind: 'static' | 'node', spa, startCommand? }` as JSON. */
export const deploymentRuntime: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('deployments').addColumn('runtime', 'text').execute();
  },
};
