import { randomBytes } from 'node:crypto';
import { defineConfig } from 'vitest/config';

/**
 * The server suite runs twice: on SQLite, and on PostgreSQL when SLIPWAY_TEST_DATABASE_URL points
 * at a server (.ci/run sets it). Each createTestApp()/startStack() of the PostgreSQL run gets a
 * fresh database; the run id below prefixes their names so the global teardown drops leftovers of
 * this run only.
 */
const postgresUrl = process.env.SLIPWAY_TEST_DATABASE_URL;
process.env.SLIPWAY_TEST_RUN_ID ??= randomBytes(4).toString('hex');

const postgresOnly = ['test/server/postgres/**/*.test.ts', 'test/multiprocess/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...postgresOnly],
          env: { SLIPWAY_TEST_DIALECT: 'sqlite' },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          // The notice when PostgreSQL is missing, and the drop of this run's leftover databases.
          globalSetup: ['test/helpers/global-setup.ts'],
          // Without a server only the PostgreSQL-only files run, and they skip with a reason.
          include: postgresUrl
            ? ['test/server/**/*.test.ts', 'test/api/**/*.test.ts', ...postgresOnly]
            : postgresOnly,
          env: { SLIPWAY_TEST_DIALECT: 'postgres' },
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
