import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runShell } from '../../helpers/process.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const url = process.env.SLIPWAY_TEST_DATABASE_URL;

/** The sh blocks after `marker` in docs/scaling.md, in order. */
function blocks(marker: string, n: number): string[] {
  const doc = readFileSync(join(ROOT, 'docs/scaling.md'), 'utf8');
  let at = doc.indexOf(marker);
  expect(at, marker).toBeGreaterThan(-1);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const start = doc.indexOf('```sh\n', at) + '```sh\n'.length;
    const end = doc.indexOf('\n```', start);
    out.push(doc.slice(start, end));
    at = end + 4;
  }
  return out;
}

/** No update check against the registry from npx. */
const sh = (script: string, cwd: string, env: Record<string, string>) =>
  runShell(script, cwd, { PATH: process.env.PATH, npm_config_update_notifier: 'false', ...env });

/**
 * docs/scaling.md's "Set up the database", run as written against this machine's PostgreSQL: the
 * server's host name is the one thing changed (db.internal is this machine's 127.0.0.1 here).
 */
describe('setting up PostgreSQL as docs/scaling.md says', () => {
  it.skipIf(!url)(
    'creates the user and database, and migrate says what it created (skipped without SLIPWAY_TEST_DATABASE_URL)',
    { timeout: 120_000 },
    async () => {
      const admin = new URL(url!);
      const superuser = { PGHOST: admin.hostname, PGPORT: admin.port || '5432', PGUSER: admin.username };
      const drop = () =>
        sh('psql -c "DROP DATABASE IF EXISTS slipway" -c "DROP USER IF EXISTS slipway"', ROOT, superuser);
      const [create, migrate] = blocks('## Set up the database', 2);
      const dir = mkdtempSync(join(tmpdir(), 'slipway-scaling-'));
      try {
        await drop();
        const made = await sh(create!, ROOT, superuser);
        expect(made.code, made.stderr).toBe(0);
        expect(made.stdout).toBe('CREATE ROLE\nCREATE DATABASE\n');

        writeFileSync(join(dir, 'key.b64'), Buffer.alloc(32, 5).toString('base64'));
        const [command, printed] = migrate!.split('\n');
        // This machine's names for the database server and the key file.
        const local = (s: string) =>
          s.replaceAll('db.internal', '127.0.0.1').replaceAll('/etc/slipway/key.b64', join(dir, 'key.b64'));
        const run = await sh(local(command!), ROOT, { HOME: dir, SLIPWAY_DATA_DIR: join(dir, 'data') });
        expect(run.code, run.stderr).toBe(0);
        expect(run.stderr.split('\n')).toContain(local(printed!.replace(/^# /, '')));
      } finally {
        await drop();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
