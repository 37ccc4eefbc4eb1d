import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../../platform/store/schema.ts';

/** What a target is made of: the deployment `d` and the one it rolled back to, `src`. */
const DEPLOYMENT_COLUMNS = [
  'd.id',
  'd.status',
  'd.target',
  'd.artifact_id',
  'd.runtime',
  'src.artifact_id as source_artifact_id',
  'src.runtime as source_runtime',
] as const;

/** The columns of both halves of a label's look-up (`labelRows`), in one order. */
const LABEL_COLUMNS = [
  'p.id as project_id',
  'p.status as project_status',
  'p.framework',
  'p.deleted_at',
  'p.production_deployment_id',
  'p.protection',
  'p.protection_bypass_hash',
  ...DEPLOYMENT_COLUMNS,
] as const;

/** A deployment with what a target is made of (DEPLOYMENT_COLUMNS) and its project's id. */
export const deploymentQuery = (db: Kysely<Database>) =>
  db
    .selectFrom('deployments as d')
    .leftJoin('deployments as src', 'src.id', 'd.source_deployment_id')
    .select(['d.project_id', ...DEPLOYMENT_COLUMNS]);

/**
 * A service-domain label in one round trip: the project whose production host it is, with that
 * project's production deployment (`via` 1), the deployment whose host it is (`via` 0: a
 * deployment's URL wins), and the branch URL it is, with the preview it serves (`via` 2: last;
 * allocation keeps branch labels clear of the others). Three queries in turn before; a health
 * probe of a production URL, which is rarely in the cache, paid all three.
 */
export const labelRows = (db: Kysely<Database>, label: string) =>
  db
    .selectFrom('projects as p')
    .leftJoin('deployments as d', 'd.id', 'p.production_deployment_id')
    .leftJoin('deployments as src', 'src.id', 'd.source_deployment_id')
    .select([sql<number>`1`.as('via'), ...LABEL_COLUMNS])
    .where('p.production_host', '=', label)
    .where('p.deleted_at', 'is', null)
    .unionAll(
      // The same columns in the same order: a union matches them by position.
      db
        .selectFrom('deployments as d')
        .innerJoin('projects as p', 'p.id', 'd.project_id')
        .leftJoin('deployments as src', 'src.id', 'd.source_deployment_id')
        .select([sql<number>`0`.as('via'), ...LABEL_COLUMNS])
        .where('d.host', '=', label),
    )
    .unionAll(
      db
        .selectFrom('branch_aliases as a')
        .innerJoin('projects as p', 'p.id', 'a.project_id')
        .leftJoin('deployments as d', 'd.id', 'a.deployment_id')
        .leftJoin('deployments as src', 'src.id', 'd.source_deployment_id')
        .select([sql<number>`2`.as('via'), ...LABEL_COLUMNS])
        .where('a.host', '=', label),
    )
    .execute();

/** The rows of a label's look-up. */
export type LabelRow = Awaited<ReturnType<typeof labelRows>>[number];
