import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';

const BIN = resolve(import.meta.dirname, '../../bin/slipway.js');
const dirs: string[] = [];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI as a child process with only SLIPWAY_DATA_DIR configured. */
function slipway(args: string[], dataDir: string): Promise<Run> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('SLIPWAY_') && k !== 'DATABASE_URL'),
  );
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...env, SLIPWAY_DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      stdio: 'pipe',
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

describe.concurrent(
  'slipway credits add',
  {
    timeout: 90_000,
    // The CLI and the test app share state through the SQLite file in one data dir; the CLI on
    // PostgreSQL runs in test/multiprocess. Spawning is slow, so the PostgreSQL run skips these.
    skip: testDialect() === 'postgres',
  },
  () => {
    afterAll(() => {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });
    const tempDir = () => {
      const dir = mkdtempSync(join(tmpdir(), 'slipway-credits-'));
      dirs.push(dir);
      return dir;
    };

    it('tops up an organization by name in exact cents, and the billing API shows it', async () => {
      const dataDir = tempDir();
      const token = await slipway(
        ['token', 'create', '--email', 'ops@example.com', '--name', 'cli'],
        dataDir,
      );
      expect(token.code, token.stderr).toBe(0);
      const first = await slipway(['credits', 'add', '--org', 'ops', '--amount', '25.00'], dataDir);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toBe('Added 25.00 USD to ops; balance 25.00 USD.\n');
      const second = await slipway(['credits', 'add', '--org', 'ops', '--amount', '0.1'], dataDir);
      expect(second.stdout).toBe('Added 0.10 USD to ops; balance 25.10 USD.\n');
      const t = await createTestApp({ dataDir, env: { SLIPWAY_ENCRYPTION_KEY: '' } });
      try {
        const org = await t.deps.db
          .selectFrom('organizations')
          .select('id')
          .where('name', '=', 'ops')
          .executeTakeFirstOrThrow();
        const billing = await t.call(token.stdout.trim(), 'GET', `/v1/organizations/${org.id}/billing`);
        expect(billing.body.data.balance).toEqual({ amount: '25.10', currency: 'USD' });
        const entries = await t.deps.db.selectFrom('ledger_entries').selectAll().execute();
        expect(entries.map((e) => [e.kind, e.amount_cents])).toEqual([
          ['topup', 2500],
          ['topup', 10],
        ]);
        expect(entries[0]!.id).toMatch(/^top_[a-z0-9]{20}$/);
      } finally {
        await t.close();
      }
    });

    // More shapes of amounts are covered by payments-money.test.ts; a child process costs a second or two.
    for (const amount of ['25.001', '-1', 'abc']) {
      it(`rejects --amount "${amount}", naming --amount`, async () => {
        const run = await slipway(['credits', 'add', '--org', 'ops', `--amount=${amount}`], tempDir());
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(/^slipway: --amount must be a positive amount in dollars/);
        expect(run.stdout).toBe('');
      });
    }

    it('names an unknown organization and explains the usage', async () => {
      const unknown = await slipway(['credits', 'add', '--org', 'nope', '--amount', '5'], tempDir());
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toBe('slipway: Organization nope not found\n');
      const usage = await slipway(['credits', 'remove', '--org', 'x'], tempDir());
      expect(usage.code).toBe(2);
      expect(usage.stderr).toMatch(/Usage: slipway credits add --org NAME --amount 25\.00/);
    });
  },
);
