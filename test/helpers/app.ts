import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../server/app.ts';
import { loadConfig } from '../../server/platform/config.ts';
import type { Clock } from '../../server/core/clock.ts';
import type { Dns } from '../../server/core/dns.ts';
import { closeDeps, createDeps } from '../../server/runtime.ts';
import type { Deps } from '../../server/platform/deps/deps.ts';
import { createToken } from '../../server/features/identity/users/create-token.ts';
import { findOrCreateUser } from '../../server/features/identity/users/find-or-create-user.ts';
import { databaseForTest } from './database.ts';

export interface TestUser {
  userId: string;
  email: string;
  token: string;
  /** The user's personal organization. */
  orgId: string;
}

export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  dataDir: string;
  /** Creates (or finds) a user and gives them a fresh token (the GitHub App's kind with `githubApp`). */
  user(email?: string, kind?: { githubApp?: boolean }): Promise<TestUser>;
  /** inject() with the token as bearer; `body` is sent as JSON. */
  call(
    user: TestUser | string | null,
    method: InjectOptions['method'],
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Record<string, unknown>; text: string }>;
  close(): Promise<void>;
}

let counter = 0;

/**
 * A real service on a real SQLite file in a temp dir (or a fresh PostgreSQL database on the
 * suite's PostgreSQL run), driven through inject().
 */
export async function createTestApp(
  opts: {
    env?: Record<string, string>;
    clock?: Clock;
    dataDir?: string;
    keepDataDir?: boolean;
    dns?: Dns;
    /** Where the service logs; default nowhere. */
    log?: pino.Logger;
  } = {},
): Promise<TestApp> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'slipway-test-'));
  // On the suite's PostgreSQL run, a fresh database per app (dropped on close).
  const database = await databaseForTest(opts.env, dataDir, !opts.dataDir && !opts.keepDataDir);
  const config = loadConfig({
    SLIPWAY_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    // Other features' tests read previews as before; protection's own set it (docs/protection.md).
    SLIPWAY_DEFAULT_PROTECTION: 'none',
    // Test files run two at a time, all one developer's: a free organization's builds here would
    // otherwise be held to the free plan's cpu-cap while another file's enterprise build runs
    // (the cap's own tests: test/server/sandbox/cgroups.test.ts, cpu-pools.test.ts).
    SLIPWAY_FREE_LIMITS: 'cpu-cap=none',
    ...database.env,
    ...opts.env,
  });
  const deps = await createDeps(config, {
    log: opts.log ?? pino({ level: 'silent' }),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.dns ? { dns: opts.dns } : {}),
  });
  const app = buildApp(deps);
  await app.ready();
  return {
    app,
    deps,
    dataDir,
    async user(email, kind = {}) {
      const e = email ?? `user${++counter}-${Date.now()}@example.com`;
      const u = await findOrCreateUser(deps, e);
      const token = await createToken(deps, u.id, 'test', undefined, kind);
      const org = await deps.db
        .selectFrom('organizations')
        .select('id')
        .where('personal_user_id', '=', u.id)
        .executeTakeFirstOrThrow();
      return { userId: u.id, email: u.email, token: token.token, orgId: org.id };
    },
    async call(user, method, url, body, headers = {}) {
      const token = typeof user === 'string' ? user : user?.token;
      const res = await app.inject({
        method,
        url,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      let parsed: unknown;
      try {
        parsed = res.json();
      } catch {
        parsed = undefined;
      }
      return { status: res.statusCode, body: parsed, headers: res.headers, text: res.body };
    },
    async close() {
      await app.close();
      await closeDeps(deps);
      await database.drop();
      if (!opts.keepDataDir && !opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
