import { dropRunDatabases } from './database.ts';

/** Says loudly when the PostgreSQL run is skipped, and drops what the PostgreSQL run left behind. */
export default function setup(): () => Promise<void> {
  if (!process.env.SLIPWAY_TEST_DATABASE_URL) {
    console.warn(
      '\n[slipway] SLIPWAY_TEST_DATABASE_URL is not set: the PostgreSQL run of the server suite and ' +
        'the multi-process tests are SKIPPED. Set it (e.g. postgres://postgres@127.0.0.1:5432/postgres) ' +
        'to run them; .ci/run does.\n',
    );
  }
  return async () => {
    await dropRunDatabases();
  };
}
