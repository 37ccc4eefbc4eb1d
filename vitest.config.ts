import { randomBytes } from 'node:crypto';
import { defineConfig } from 'vitest/config';

/**
 * The server suite runs twice: on SQLite, and on PostgreSQL when SLIPWAY_TEST_DATABASE_URL points
 * at a server (.ci/run sets it). Each createTestApp()/startStack() of the PostgreSQL run gets a
 * fresh database; the run id below prefixes their names so the global teardown drops leftovers of
 * this run only.
 *
 * The builder's and the blob stores' own files (test/server/builder, test/server/storage) open no
 * database: they run once, in the SQLite project.
 *
 * Files run two at a time (SLIPWAY_TEST_WORKERS, default 2): most of the suite waits on child
 * processes, sockets and timers, so a second file fills the idle core. The files that measure the
 * machine itself (the sandbox's limits and attacks, real framework builds) run afterwards, one at a
 * time, with the machine to themselves: a neighbour's load would change what they measure.
 *
 * The two database projects run their files without isolation (`isolate: false`): a worker loads
 * the service's modules once, not once per file, which took 28% of the workers' time (282 of
 * 1,006 s for test/server/*.test.ts on 2 cores; 36 s without isolation, the files 30% faster in
 * all). Their files keep no state between them: each makes its own app, stack or temp dirs, and
 * puts back any environment variable or spy it changes. The files run alone stay isolated.
 */
const postgresUrl = process.env.SLIPWAY_TEST_DATABASE_URL;
process.env.SLIPWAY_TEST_RUN_ID ??= randomBytes(4).toString('hex');

const workers = Number(process.env.SLIPWAY_TEST_WORKERS ?? 2);
const postgresOnly = ['test/server/postgres/**/*.test.ts', 'test/multiprocess/**/*.test.ts'];
const noDatabase = ['test/server/builder/**/*.test.ts', 'test/server/storage/**/*.test.ts'];
const alone = [
  'test/security/**/*.test.ts',
  'test/frameworks/**/*.test.ts',
  'test/server/sandbox/**/*.test.ts',
];
const excluded = ['**/node_modules/**'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: workers,
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: [...excluded, ...postgresOnly, ...alone],
          env: { SLIPWAY_TEST_DIALECT: 'sqlite' },
          isolate: false,
          sequence: { groupOrder: 0 },
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
          exclude: [...excluded, ...alone, ...noDatabase],
          env: { SLIPWAY_TEST_DIALECT: 'postgres' },
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: alone,
          exclude: excluded,
          env: { SLIPWAY_TEST_DIALECT: 'sqlite' },
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
      ...(postgresUrl
        ? [
            {
              extends: true as const,
              test: {
                name: 'postgres-alone',
                include: ['test/server/sandbox/**/*.test.ts'],
                exclude: excluded,
                env: { SLIPWAY_TEST_DIALECT: 'postgres' },
                testTimeout: 60_000,
                hookTimeout: 60_000,
                maxWorkers: 1,
                sequence: { groupOrder: 2 },
              },
            },
          ]
        : []),
    ],
  },
});
