import type { Kysely, Migration } from 'kysely';

/**
 * Per-project build settings (each null: detect) and the framework each deployment was built
 * as, so a build can say when detection changed and the project's `framework` stays the user's
 * own setting (it no longer records what a build detected).
 */
export const buildSettings: Migration = {
  async up(db: Kysely<unknown>) {
    for (const column of ['install_command', 'build_command', 'output_directory', 'root_directory']) {
      await db.schema.alterTable('projects').addColumn(column, 'text').execute();
    }
    await db.schema.alterTable('deployments').addColumn('framework', 'text').execute();
  },
};
