import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { chmodSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/platform/config.ts';
import { findFreePort } from '../../server/core/free-port.ts';
import { isDatabaseUnavailable } from '../../server/platform/http/errors.ts';
import { LEASE_EXPIRED } from '../../server/platform/queue/queue.ts';
import { createDeps } from '../../server/runtime.ts';
import { BUILD_JOB } from '../../server/features/deployments/queue-deployment.ts';
import type { Deps } from '../../server/platform/deps/deps.ts';
import { createToken } from '../../server/features/identity/users/create-token.ts';
import { findOrCreateUser } from '../../server/features/identity/users/find-or-create-user.ts';
import { createTestDatabase, terminateBackends, type TestDatabase } from '../helpers/database.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { readDeliveries } from '../helpers/deliveries.ts';

const url = process.env.SLIPWAY_TEST_DATABASE_URL;

/**
 * Two API, two worker and one edge process (`slipway serve --role ...`, real processes) on one
 * fresh PostgreSQL database and one artifacts directory. This process only drives them over HTTP
 * and reads the database to check what happened.
 */
describe.skipIf(!url)(
  `scale-out on PostgreSQL${url ? '' : ' (skipped: SLIPWAY_TEST_DATABASE_URL is not set)'}`,
  () => {
    let database: TestDatabase;
    let root: string;
    let deps: Deps;
    let repo: GitRepo;
    let slowRepo: GitRepo;
    let receiver: Server;
    let receiverUrl: string;
    const received = new Map<string, number>();
    const procs = new Map<string, ChildProcess>();
    const apis: string[] = [];
    let baseEnv: Record<string, string>;
    let token: string;
    let orgId: string;

    function start(name: string, role: string, env: Record<string, string> = {}): ChildProcess {
      const child = spawn(process.execPath, ['bin/slipway.js', 'serve', '--role', role], {
        env: {
          ...process.env,
          ...baseEnv,
          SLIPWAY_DATA_DIR: join(root, name),
          ...env,
        },
        stdio: ['ignore', 'ignore', openSync(join(root, `${name}.log`), 'a')],
        // Its own process group: a SIGKILL takes its running build with it.
        detached: true,
      });
      procs.set(name, child);
      return child;
    }

    const up = (u: string) =>
      waitFor(`${u} to answer`, async () => (await fetch(`${u}/healthz`).catch(() => null))?.ok, 60_000);

    beforeAll(async () => {
      database = await createTestDatabase();
      root = mkdtempSync(join(tmpdir(), 'slipway-scale-'));
      // The sandbox's user passes through it to each process's data directory and workspaces.
      chmodSync(root, 0o711);
      receiver = createServer((req, res) => {
        const id = String(req.headers['x-slipway-delivery']);
        received.set(id, (received.get(id) ?? 0) + 1);
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
      const addr = receiver.address();
      receiverUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hook`;

      const edgePort = await findFreePort();
      baseEnv = {
        DATABASE_URL: database.url,
        SLIPWAY_DB_POOL_SIZE: '5',
        SLIPWAY_ARTIFACTS_DIR: join(root, 'artifacts'),
        SLIPWAY_EDGE_PORT: String(edgePort),
        SLIPWAY_EDGE_INTERNAL_URL: `http://127.0.0.1:${edgePort}`,
        SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
        // Previews open without a sign-in, as in the other features' tests (docs/protection.md).
        SLIPWAY_DEFAULT_PROTECTION: 'none',
        SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        SLIPWAY_JOB_LEASE: '3s',
        SLIPWAY_BUILD_CONCURRENCY: '4',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      };
      // This process migrates first, so the five do not race for the migration lock at start.
      deps = await createDeps(
        loadConfig({ ...baseEnv, SLIPWAY_DATA_DIR: join(root, 'driver'), LOG_LEVEL: 'silent' }),
        {
          log: pino({ level: 'silent' }),
        },
      );
      const ports = [await findFreePort(), await findFreePort()];
      ports.forEach((port, i) => {
        start(`api${i + 1}`, 'api', { PORT: String(port) });
        apis.push(`http://127.0.0.1:${port}`);
      });
      start('worker1', 'worker');
      start('worker2', 'worker');
      start('edge', 'edge');
      await Promise.all([...apis.map(up), up(`http://127.0.0.1:${edgePort}`).catch(() => undefined)]);

      const user = await findOrCreateUser(deps, 'scale@example.com');
      token = (await createToken(deps, user.id, 'scale')).token;
      await deps.db
        .updateTable('organizations')
        .set({ plan: 'enterprise' })
        .where('personal_user_id', '=', user.id)
        .execute();
      orgId = (
        await deps.db
          .selectFrom('organizations')
          .select('id')
          .where('personal_user_id', '=', user.id)
          .executeTakeFirstOrThrow()
      ).id;

      repo = createGitRepo({ files: { 'index.html': '<h1>scaled</h1>' } });
      slowRepo = createGitRepo({
        files: {
          'package.json': JSON.stringify({
            name: 'slow',
            private: true,
            scripts: { build: 'node build.mjs' },
          }),
          'build.mjs':
            "import { mkdirSync, writeFileSync } from 'node:fs';\n" +
            'await new Promise((r) => setTimeout(r, 4000));\n' +
            "mkdirSync('dist', { recursive: true });\n" +
            "writeFileSync('dist/index.html', 'survived');\n",
        },
      });
    }, 120_000);

    afterAll(async () => {
      // A process that died on its own explains why here.
      for (const [name, child] of procs) {
        if (child.exitCode !== null && child.exitCode !== 0) {
          const log = readFileSync(join(root, `${name}.log`), 'utf8').slice(-4000);
          console.error(`${name} exited with ${child.exitCode}:\n${log}`);
        }
      }
      for (const child of procs.values()) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await deps?.store.close();
      await new Promise((r) => receiver?.close(r));
      await database?.drop();
      repo?.remove();
      slowRepo?.remove();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    async function call(
      i: number,
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = {},
      auth = token,
    ) {
      const res = await fetch(`${apis[i % apis.length]}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${auth}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json().catch(() => null)) as any, headers: res.headers };
    }

    async function createProject(name: string, repositoryUrl: string) {
      const res = await call(0, 'POST', '/v1/projects', {
        name,
        repositoryUrl,
        framework: 'static',
        organizationId: orgId,
      });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    }

    it('a free token gets exactly 100 successes across both API processes', async () => {
      const free = await findOrCreateUser(deps, 'free@example.com');
      const freeToken = (await createToken(deps, free.id, 'free')).token;
      const results = await Promise.all(
        Array.from({ length: 130 }, (_, i) => call(i, 'GET', '/v1/projects', undefined, {}, freeToken)),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(100);
      expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    });

    it('50 concurrent POSTs with one Idempotency-Key across both give one deployment', async () => {
      const projectId = await createProject('idem', repo.url);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          call(
            i,
            'POST',
            `/v1/projects/${projectId}/deployments`,
            { message: 'once' },
            { 'idempotency-key': 'one-key' },
          ),
        ),
      );
      const ids = new Set(results.filter((r) => r.status === 201).map((r) => r.body.data.id));
      expect(ids.size).toBe(1);
      // A concurrent duplicate either replays the first answer or is told the first is in flight.
      for (const r of results) expect([201, 409]).toContain(r.status);
      const rows = await deps.db
        .selectFrom('deployments')
        .select('id')
        .where('project_id', '=', projectId)
        .execute();
      expect(rows.map((r) => r.id)).toEqual([...ids]);
    });

    it(
      'builds 200 concurrent deployments exactly once each, all live, every webhook delivered once, through a database restart',
      // 200 sandboxed builds on two workers take about a minute on an idle 2-core machine, and
      // more than twice that beside the rest of the suite: the waits allow for it; what is
      // checked is that each runs exactly once and goes live, not how fast.
      { timeout: 420_000 },
      async () => {
        const projectId = await createProject('many', repo.url);
        const hook = await call(0, 'POST', `/v1/projects/${projectId}/webhooks`, {
          url: receiverUrl,
          events: ['deployment.created', 'deployment.success'],
          secret: 'a-secret-of-sixteen-chars',
        });
        expect(hook.status).toBe(201);

        // Every request retries (with its idempotency key) on a 503 while the database is away.
        const create = async (i: number) => {
          for (let attempt = 0; ; attempt++) {
            const res = await call(
              i + attempt,
              'POST',
              `/v1/projects/${projectId}/deployments`,
              { message: `n${i}` },
              {
                'idempotency-key': `many-${i}`,
              },
            ).catch(() => ({ status: 0, body: null }));
            if (res.status === 201) return res.body.data.id as string;
            expect([0, 409, 503]).toContain(res.status);
            await new Promise((r) => setTimeout(r, 200));
          }
        };
        const pending = Array.from({ length: 200 }, (_, i) => create(i));
        // The database "restarts" while deployments are being created and built.
        await waitFor(
          'some deployments',
          async () => {
            const n = await deps.db
              .selectFrom('deployments')
              .select((eb) => eb.fn.countAll<string>().as('n'))
              .where('project_id', '=', projectId)
              .executeTakeFirstOrThrow();
            return Number(n.n) >= 60;
          },
          60_000,
        );
        expect(await terminateBackends(database.name)).toBeGreaterThan(0);
        const ids = await Promise.all(pending);
        expect(new Set(ids).size).toBe(200);

        await waitFor(
          'every deployment to go live',
          async () => {
            const rows = await deps.db
              .selectFrom('deployments')
              .select('status')
              .where('project_id', '=', projectId)
              .execute();
            expect(rows.filter((r) => r.status === 'failed')).toEqual([]);
            return rows.length === 200 && rows.every((r) => r.status === 'live');
          },
          240_000,
        );

        // A deployment goes live a moment before its job is marked done (and an attempt that lost
        // its connection after the deployment went live is retried, finding nothing left to do).
        const mine = await waitFor(
          'every build job to finish',
          async () => {
            const jobs = await deps.db
              .selectFrom('jobs')
              .select(['payload', 'attempts', 'status', 'last_error'])
              .where('kind', '=', BUILD_JOB)
              .execute();
            const rows = jobs.filter((j) => ids.includes(JSON.parse(j.payload).deploymentId));
            expect(rows).toHaveLength(200);
            expect(rows.filter((j) => j.status === 'failed')).toEqual([]);
            return rows.every((j) => j.status === 'done') && rows;
          },
          60_000,
        );
        // Exactly once, except a build that the database restart interrupted: that attempt failed
        // on its dropped connection, or could not renew its lease through the restart and stopped,
        // and the job ran again (a retry, never a concurrent second run).
        const again = mine.filter((j) => j.attempts !== 1);
        for (const j of again) {
          expect(j.attempts).toBe(2);
          const why = j.last_error ?? '';
          expect(
            isDatabaseUnavailable({ message: why }) || why.startsWith(LEASE_EXPIRED),
            `last error: ${why}`,
          ).toBe(true);
        }
        expect(again.length).toBeLessThanOrEqual(10);

        const deliveries = await waitFor(
          'every delivery',
          async () => {
            const rows = await readDeliveries(deps.db, { webhookId: hook.body.data.id });
            return rows.length === 400 && rows.every((r) => r.status === 'success') && rows;
          },
          60_000,
        );
        for (const d of deliveries) expect(received.get(d.id)).toBe(1);
      },
    );

    it('a worker killed with SIGKILL mid-build has its job finished by the other', async () => {
      const projectId = await createProject('slow', slowRepo.url);
      const created = await call(1, 'POST', `/v1/projects/${projectId}/deployments`, {});
      expect(created.status).toBe(201);
      const deploymentId = created.body.data.id as string;
      const job = await waitFor(
        'the build to be claimed',
        async () => {
          const rows = await deps.db
            .selectFrom('jobs')
            .selectAll()
            .where('kind', '=', BUILD_JOB)
            .where('status', '=', 'running')
            .execute();
          return rows.find((j) => JSON.parse(j.payload).deploymentId === deploymentId);
        },
        20_000,
      );
      const victim = [...procs.entries()].find(
        ([name, c]) => name.startsWith('worker') && job.locked_by!.includes(`-${c.pid}-`),
      );
      expect(victim).toBeDefined();
      process.kill(-victim![1].pid!, 'SIGKILL');

      const live = await waitFor(
        'the other worker to finish it',
        async () => {
          const d = await deps.db
            .selectFrom('deployments')
            .select('status')
            .where('id', '=', deploymentId)
            .executeTakeFirstOrThrow();
          expect(d.status).not.toBe('failed');
          return d.status === 'live';
        },
        40_000,
      );
      expect(live).toBe(true);
      const after = await deps.db
        .selectFrom('jobs')
        .selectAll()
        .where('id', '=', job.id)
        .executeTakeFirstOrThrow();
      expect(after.attempts).toBe(2);
      expect(after.locked_by).not.toBe(job.locked_by);
    });

    it('stops every process cleanly on SIGTERM', async () => {
      const alive = [...procs.entries()].filter(([, c]) => c.exitCode === null && c.signalCode === null);
      const codes = await Promise.all(
        alive.map(
          ([, c]) =>
            new Promise<number | null>((resolve) => {
              c.once('exit', (code) => resolve(code));
              c.kill('SIGTERM');
            }),
        ),
      );
      expect(codes).toEqual(alive.map(() => 0));
    });
  },
);
