import type { Kysely, Migration } from 'kysely';

interface Row {
  id: string;
  target: 'production' | 'preview';
  branch: string;
  requested_commit: string | null;
  source: 'git' | 'upload' | 'prebuilt';
  source_files: string | null;
  use_cache: number;
  p_branch: string;
  framework: string | null;
  install_command: string | null;
  build_command: string | null;
  output_directory: string | null;
  root_directory: string | null;
}

/**
 * The build spec (server/platform/store/build-spec.ts): what a deployment builds is decided when it is
 * queued, in one JSON column, instead of read from the project when the build runs. Deployments
 * queued before get the spec their build would have had (the project's settings now, as the
 * build read them); a rollback reuses a build and has none. The uploaded file list, the
 * pinned commit and the cache flag move into it. This copy of the rules is frozen here: later changes to how specs
 * are decided must not change what this migration did.
 */
export const buildSpec: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('deployments').addColumn('build_spec', 'text').execute();
    const d = db as unknown as Kysely<{
      deployments: Row & {
        build_spec: string | null;
        source_deployment_id: string | null;
        project_id: string;
      };
      projects: { id: string; branch: string } & Pick<
        Row,
        'framework' | 'install_command' | 'build_command' | 'output_directory' | 'root_directory'
      >;
    }>;
    for (;;) {
      const rows = await d
        .selectFrom('deployments as dp')
        .innerJoin('projects as p', 'p.id', 'dp.project_id')
        .select([
          'dp.id',
          'dp.target',
          'dp.branch',
          'dp.requested_commit',
          'dp.source',
          'dp.source_files',
          'dp.use_cache',
          'p.branch as p_branch',
          'p.framework',
          'p.install_command',
          'p.build_command',
          'p.output_directory',
          'p.root_directory',
        ])
        .where('dp.build_spec', 'is', null)
        .where('dp.source_deployment_id', 'is', null)
        .limit(500)
        .execute();
      if (rows.length === 0) break;
      for (const row of rows) {
        await d
          .updateTable('deployments')
          .set({ build_spec: JSON.stringify(specOf(row)) })
          .where('id', '=', row.id)
          .execute();
      }
    }
    await db.schema.alterTable('deployments').dropColumn('source_files').execute();
    await db.schema.alterTable('deployments').dropColumn('use_cache').execute();
    await db.schema.alterTable('deployments').dropColumn('requested_commit').execute();
  },
};

function specOf(r: Row) {
  const files = JSON.parse(r.source_files ?? '[]') as unknown[];
  const source =
    r.source === 'git'
      ? { kind: 'git', ref: r.branch, commit: r.requested_commit }
      : { kind: r.source, files };
  let cache = null;
  if (r.use_cache) {
    if (r.target === 'production') {
      const own = `production:${r.branch}`;
      const main = `production:${r.p_branch}`;
      cache = { save: own, restore: own === main ? [{ lane: own }] : [{ lane: own }, { lane: main }] };
    } else if (r.branch.startsWith('refs/') && !r.branch.startsWith('refs/heads/')) {
      cache = { save: `ref:${r.branch}`, restore: [{ lane: `ref:${r.branch}` }] };
    } else {
      const own = `preview:${r.branch.replace(/^refs\/heads\//, '')}`;
      cache = { save: own, restore: [{ lane: own }, { newestOf: 'preview' }] };
    }
  }
  return {
    source,
    framework: r.framework,
    settings: {
      installCommand: r.install_command,
      buildCommand: r.build_command,
      outputDirectory: r.output_directory,
      rootDirectory: r.root_directory,
    },
    cache,
    target: r.target,
  };
}
