import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCipher } from '../../server/core/secrets.ts';
import { dialectHelpers } from '../../server/platform/store/dialect.ts';
import { allMigrations } from '../../server/platform/store/migrations/index.ts';
import { createTestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { mountsUnder } from '../helpers/mounts.ts';
import { waitFor } from '../helpers/wait-for.ts';

const BIN = resolve(import.meta.dirname, '../../bin/slipway.js');
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-cli-'));
  dirs.push(dir);
  return dir;
};

/** The environment of the test run without anything that configures Slipway, plus `env`. */
function cleanEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('SLIPWAY_') && !['PORT', 'HOST', 'DATABASE_URL', 'LOG_LEVEL'].includes(k),
    ),
  );
  return { ...base, ...env };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI as a child process; `onStderr` may act on a running server and end it. */
function slipway(
  args: string[],
  env: Record<string, string>,
  onStderr?: (text: string, child: ReturnType<typeof spawn>) => void,
): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: cleanEnv(env), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    // Generous: five children start at once and share two cores with the rest of the suite.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      onStderr?.(stderr, child);
    });
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

describe.concurrent(
  'the slipway CLI',
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

    it('token create creates the user, prints exactly one token line, and the token authenticates', async () => {
      const dataDir = tempDir();
      const run = await slipway(['token', 'create', '--email', 'Ops@Example.com', '--name', 'laptop'], {
        SLIPWAY_DATA_DIR: dataDir,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^slw_[A-Za-z0-9_-]{32,}\n$/);
      const t = await createTestApp({ dataDir, env: { SLIPWAY_ENCRYPTION_KEY: '' } });
      try {
        const me = await t.call(run.stdout.trim(), 'GET', '/v1/user');
        expect(me.status).toBe(200);
        expect(me.body.data.email).toBe('ops@example.com');
        expect(me.body.data.organizations).toEqual([
          expect.objectContaining({ name: 'ops', role: 'owner', plan: 'free' }),
        ]);
        const tokens = await t.call(run.stdout.trim(), 'GET', '/v1/user/tokens');
        expect(tokens.body.data.map((tok: { name: string }) => tok.name)).toEqual(['laptop']);
      } finally {
        await t.close();
      }
    });

    it('migrate says what it created on a new database, then that there is nothing to do', async () => {
      const dataDir = tempDir();
      const first = await slipway(['migrate'], { SLIPWAY_DATA_DIR: dataDir });
      expect(first.code, first.stderr).toBe(0);
      const names = Object.keys(allMigrations(dialectHelpers('sqlite'), createCipher(Buffer.alloc(32))));
      // After the warning that it generated an encryption key into the new data directory.
      expect(first.stderr.split('\n').at(-2)).toBe(
        `Created Slipway's tables in ${dataDir}/slipway.db (${names.length} migrations, 001_initial to ` +
          `${names.at(-1)}). Next: slipway serve`,
      );
      const again = await slipway(['migrate'], { SLIPWAY_DATA_DIR: dataDir });
      expect(again).toMatchObject({
        code: 0,
        stderr: `The database ${dataDir}/slipway.db is up to date: no migration to apply.\n`,
      });
    });

    it('token create adds a token to an existing user, beside a running service', async () => {
      const dataDir = tempDir();
      const t = await createTestApp({ dataDir, env: { SLIPWAY_ENCRYPTION_KEY: '' } });
      try {
        const ops = await t.user('ops@example.com');
        const run = await slipway(['token', 'create', '--email', 'ops@example.com', '--name', 'ci'], {
          SLIPWAY_DATA_DIR: dataDir,
        });
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout.split('\n')).toHaveLength(2);
        const me = await t.call(run.stdout.trim(), 'GET', '/v1/user');
        expect(me.body.data.id).toBe(ops.userId);
        const tokens = await t.call(ops, 'GET', '/v1/user/tokens');
        expect(tokens.body.data.map((tok: { name: string }) => tok.name).sort()).toEqual(['ci', 'test']);
      } finally {
        await t.close();
      }
    });

    it('token create --github-app makes the App’s token, the only kind the event queue takes', async () => {
      const dataDir = tempDir();
      const env = { SLIPWAY_DATA_DIR: dataDir };
      // One after the other: the first migrates the new data directory.
      const app = await slipway(
        ['token', 'create', '--email', 'bot@example.com', '--name', 'github-app', '--github-app'],
        env,
      );
      const plain = await slipway(['token', 'create', '--email', 'dev@example.com', '--name', 'laptop'], env);
      expect(app.code, app.stderr).toBe(0);
      expect(plain.code, plain.stderr).toBe(0);
      const t = await createTestApp({ dataDir, env: { SLIPWAY_ENCRYPTION_KEY: '' } });
      try {
        const claim = (token: string) =>
          t.call(token, 'POST', '/v1/github/events/claim', { limit: 1 }).then((r) => r.status);
        expect(await claim(app.stdout.trim())).toBe(200);
        expect(await claim(plain.stdout.trim())).toBe(403);
        // The App's user sees its token and can revoke it like any other.
        const tokens = await t.call(app.stdout.trim(), 'GET', '/v1/user/tokens');
        expect(tokens.body.data.map((tok: { name: string }) => tok.name)).toEqual(['github-app']);
      } finally {
        await t.close();
      }
    });

    it("org plan sets an organization's plan, and its members' rate limit follows at once", async () => {
      const dataDir = tempDir();
      const t = await createTestApp({
        dataDir,
        env: { SLIPWAY_ENCRYPTION_KEY: '', SLIPWAY_PLAN_CHANGES: 'operator' },
      });
      try {
        const ops = await t.user('owner@example.com');
        expect((await t.call(ops, 'GET', '/v1/user')).headers['x-ratelimit-limit']).toBe('100');
        const env = { SLIPWAY_DATA_DIR: dataDir };
        const run = await slipway(['org', 'plan', 'owner', 'enterprise'], env);
        expect(run.code, run.stderr).toBe(0);
        expect(run.stderr).toBe('Organization owner is on plan enterprise (was free).\n');
        const org = await t.call(ops, 'GET', `/v1/organizations/${ops.orgId}`);
        expect(org.body.data.plan).toBe('enterprise');
        // The CLI's own process cannot reach this one's token cache on SQLite: it expires within a second.
        await waitFor(
          'the enterprise tier',
          async () => (await t.call(ops, 'GET', '/v1/user')).headers['x-ratelimit-limit'] === '10000',
        );

        const bad = await slipway(['org', 'plan', 'owner', 'gold'], env);
        expect(bad.code).toBe(2);
        expect(bad.stderr).toContain('Usage: slipway org plan <organization-id-or-name> free|pro|enterprise');
        const missing = await slipway(['org', 'plan', 'nobody-here', 'pro'], env);
        expect(missing.code).toBe(2);
        expect(missing.stderr).toContain('Organization nobody-here not found');
      } finally {
        await t.close();
      }
    });

    it('--help explains every command and runs none; --version prints the version', async () => {
      const dataDir = tempDir();
      const env = { SLIPWAY_DATA_DIR: dataDir };
      const version = JSON.parse(
        readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8'),
      ).version;
      const [all, migrate, token, deploy, ver, unknown] = await Promise.all([
        slipway(['--help'], env),
        slipway(['migrate', '--help'], env),
        slipway(['token', 'create', '-h'], env),
        slipway(['deploy', '--prod', '--help'], env),
        slipway(['--version'], env),
        slipway(['frobnicate'], env),
      ]);
      expect(all.code).toBe(0);
      for (const name of ['login', 'deploy', 'env', 'serve', 'migrate', 'token', 'credits']) {
        expect(all.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
      }
      expect(migrate).toMatchObject({ code: 0, stderr: '' });
      expect(migrate.stdout).toMatch(/^Usage: slipway migrate\n/);
      expect(token.stdout).toMatch(/^Usage: slipway token create --email/);
      expect(deploy.stdout).toMatch(/^Usage: slipway deploy \[folder\]/);
      // Nothing ran: migrate --help made no database.
      expect(readdirSync(dataDir)).toEqual([]);
      expect(ver).toMatchObject({ code: 0, stdout: `slipway ${version}\n` });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toBe(
        'slipway: unknown command "frobnicate". Run `slipway --help` for the list.\n',
      );
    });

    it('serve exits non-zero naming PORT when it is malformed', async () => {
      const run = await slipway(['serve'], { PORT: 'abc', SLIPWAY_DATA_DIR: tempDir() });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('PORT must be a whole number from 0 to 65535, got "abc"');
    });

    it('serve exits non-zero naming SLIPWAY_DATA_DIR when it cannot be used', async () => {
      const file = join(tempDir(), 'not-a-dir');
      writeFileSync(file, 'x');
      const run = await slipway(['serve', '--role', 'api'], {
        SLIPWAY_DATA_DIR: file,
        PORT: '0',
        HOST: '127.0.0.1',
      });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain(`SLIPWAY_DATA_DIR: cannot use "${file}"`);
    });

    it('serve with PORT=0 prints the URL it listens on and stops cleanly on SIGTERM', async () => {
      let url: string | undefined;
      let health: Promise<number> | undefined;
      const run = await slipway(
        ['serve', '--role', 'api'],
        { SLIPWAY_DATA_DIR: tempDir(), PORT: '0', HOST: '127.0.0.1', SLIPWAY_EDGE_PORT: '0' },
        (text, child) => {
          const m = /API:\s+(http:\/\/localhost:\d+)/.exec(text);
          if (!m || url) return;
          url = m[1]!;
          health = fetch(`${url.replace('localhost', '127.0.0.1')}/healthz`).then((r) => {
            child.kill('SIGTERM');
            return r.status;
          });
        },
      );
      expect(url, run.stderr).toMatch(/^http:\/\/localhost:\d+$/);
      expect(url).not.toBe('http://localhost:0');
      expect(await health).toBe(200);
      expect(run.code).toBe(0);
      // Not a terminal: JSON lines. The banner's token command names this data directory.
      const started = run.stdout.split('\n').find((l) => l.includes('slipway started'));
      expect(JSON.parse(started!)).toMatchObject({ msg: 'slipway started', roles: ['api'] });
      expect(run.stderr).toMatch(
        /Get a token: SLIPWAY_DATA_DIR=\S+slipway-cli-\S+ npx slipway token create --email/,
      );
    });

    it('serve stopped by SIGTERM while it starts finishes starting, then stops cleanly: no workspace is left mounted', async () => {
      const dataDir = tempDir();
      const probe = createServer();
      await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
      const metricsPort = (probe.address() as AddressInfo).port;
      await new Promise((r) => probe.close(r));
      const child = spawn(process.execPath, [BIN, 'serve', '--role', 'worker'], {
        env: cleanEnv({ SLIPWAY_DATA_DIR: dataDir, SLIPWAY_METRICS_PORT: String(metricsPort) }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const exited = new Promise<[number | null, string | null]>((r) =>
        child.once('close', (code, signal) => r([code, signal])),
      );
      // The metrics listener starts first; the worker's sandbox (a test workspace mounted and
      // removed) comes after it. The SIGTERM lands in between. This file's serves start side by
      // side: on a slow 2-core machine each took about 20 s to start, so the wait has the test's room.
      await waitFor(
        'the metrics listener',
        () =>
          fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
            () => true,
            () => false,
          ),
        80_000,
      );
      child.kill('SIGTERM');
      const [code, signal] = await exited;
      expect({ code, signal }, output).toEqual({ code: 0, signal: null });
      expect(output).toContain('shutting down');
      expect(await mountsUnder(dataDir)).toEqual([]);
    });

    it('serve logs readable lines with SLIPWAY_LOG_FORMAT=pretty', async () => {
      const run = await slipway(
        ['serve', '--role', 'api'],
        { SLIPWAY_DATA_DIR: tempDir(), PORT: '0', HOST: '127.0.0.1', SLIPWAY_LOG_FORMAT: 'pretty' },
        (text, child) => {
          if (text.includes('Get a token')) setTimeout(() => child.kill('SIGTERM'), 300);
        },
      );
      const line = run.stdout.split('\n').find((l) => l.includes('slipway started'));
      expect(line, run.stdout).toBeDefined();
      expect(line!.startsWith('{')).toBe(false);
      expect(line).toMatch(/INFO.*slipway started/);
    });

    it('serve names the port and the variable when the port is taken', async () => {
      const blocker = createServer();
      await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
      const port = (blocker.address() as AddressInfo).port;
      try {
        const run = await slipway(['serve', '--role', 'api'], {
          SLIPWAY_DATA_DIR: tempDir(),
          PORT: String(port),
          HOST: '127.0.0.1',
        });
        expect(run.code).toBe(2);
        expect(run.stderr).toContain(
          `slipway: Port ${port} (the API) is already in use: stop what listens there, or set PORT to another port`,
        );
        expect(run.stderr).not.toContain('EADDRINUSE');
      } finally {
        await new Promise((r) => blocker.close(r));
      }
    });

    it('token create says when the database it writes to had no users', async () => {
      const dataDir = tempDir();
      const first = await slipway(['token', 'create', '--email', 'a@example.com'], {
        SLIPWAY_DATA_DIR: dataDir,
      });
      expect(first.code).toBe(0);
      expect(first.stderr).toContain(
        `had no users: this token works only with a service that uses this same SLIPWAY_DATA_DIR (${dataDir})`,
      );
      const second = await slipway(['token', 'create', '--email', 'b@example.com'], {
        SLIPWAY_DATA_DIR: dataDir,
      });
      expect(second.code).toBe(0);
      expect(second.stderr).toBe('');
    });
  },
);
