import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchOtherWriters } from '../../../server/features/serving/edge/watch-other-writers.ts';
import { createCipher } from '../../../server/core/secrets.ts';
import { openStore, type Store } from '../../../server/platform/store/db.ts';
import { waitFor } from '../../helpers/wait-for.ts';

/** Two stores on one SQLite file stand for `slipway serve` and a `slipway project` command beside it. */
describe('edge: writes by another process on SQLite', () => {
  let dir: string;
  let serving: Store;
  let command: Store;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'slipway-writers-'));
    serving = openStore({ dataDir: dir });
    await serving.migrate(createCipher(Buffer.alloc(32, 7)));
    command = openStore({ dataDir: dir });
  });
  afterAll(async () => {
    await serving?.close();
    await command?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is told of another connection's commit, not of its own", async () => {
    let changes = 0;
    let polls = 0;
    // Counts the watcher's reads, so the test can wait for some to have happened.
    const db = serving.db.withPlugin({
      transformQuery: (args) => (polls++, args.node),
      transformResult: async (args) => args.result,
    });
    const watch = watchOtherWriters({ db, dialect: serving.dialect }, () => changes++, { intervalMs: 10 });
    try {
      // Its own writes (the serving process signals those itself) are not reported.
      await sql`create table own_writes (x integer)`.execute(serving.db);
      await sql`insert into own_writes values (1)`.execute(serving.db);
      const seen = polls;
      await waitFor('three reads after them', () => polls >= seen + 3);
      expect(changes).toBe(0);
      await sql`insert into own_writes values (2)`.execute(command.db);
      await waitFor('the other writer to be noticed', () => changes === 1);
    } finally {
      await watch.stop();
    }
  });
});
