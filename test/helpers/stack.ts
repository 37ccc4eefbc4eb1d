import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createClient } from '../../api/client/index.ts';
import type { Deployment } from '../../api/schemas/deployments.ts';
import { loadConfig } from '../../server/platform/config.ts';
import { findFreePort } from '../../server/core/free-port.ts';
import type { Clock } from '../../server/core/clock.ts';
import { requestWithHost } from '../../server/core/http-get.ts';
import type { EdgeOptions } from '../../server/roles/edge.ts';
import { serve, type Role, type Running } from '../../server/serve.ts';
import type { LookupAll } from '../../server/core/ssrf.ts';
import { createToken } from '../../server/features/identity/users/create-token.ts';
import { findOrCreateUser } from '../../server/features/identity/users/find-or-create-user.ts';
import { databaseForTest } from './database.ts';
import { waitFor } from './wait-for.ts';

export interface Stack {
  running: Running;
  apiUrl: string;
  /** http://127.0.0.1:<edge port> */
  edgeUrl: string;
  edgePort: number;
  dataDir: string;
  /** A user with a token and their personal organization. */
  /** With `githubApp`, the token is the GitHub App's kind (`slipway token create --github-app`). */
  user(
    email?: string,
    kind?: { githubApp?: boolean },
  ): Promise<{ token: string; orgId: string; userId: string }>;
  client(token: string): ReturnType<typeof createClient>;
  /** GET from the edge with the Host header of `url` (a deployment or production URL). */
  fetchFromEdge(url: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

let users = 0;

/**
 * The whole service in this process, as `slipway serve` runs it: API, worker and edge on
 * 127.0.0.1, SQLite in a temp dir. Deployments really build and really serve.
 */
export async function startStack(
  opts: {
    env?: Record<string, string>;
    roles?: Role[];
    clock?: Clock;
    dataDir?: string;
    /** How builds resolve repository hosts (a fake DNS); default the system's. */
    lookup?: LookupAll;
    edge?: EdgeOptions;
  } = {},
): Promise<Stack> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'slipway-stack-'));
  const freePort = await findFreePort();
  // On the suite's PostgreSQL run, a fresh database per stack (dropped on stop).
  const database = await databaseForTest(opts.env, dataDir, !opts.dataDir);
  const config = loadConfig({
    SLIPWAY_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    SLIPWAY_EDGE_PORT: String(freePort),
    LOG_LEVEL: 'silent',
    SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
    SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
    // Other features' tests read previews as before; protection's own set it (docs/protection.md).
    SLIPWAY_DEFAULT_PROTECTION: 'none',
    ...database.env,
    ...opts.env,
  });
  const running = await serve(config, opts.roles ?? ['api', 'worker', 'edge'], {
    log: pino({ level: 'silent' }),
    handleSignals: false,
    banner: false,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.lookup ? { lookup: opts.lookup } : {}),
    ...(opts.edge ? { edge: opts.edge } : {}),
  });
  const edgePort = config.edgePort;
  // Empty when the stack runs no API (an edge-only process of a multi-process test).
  const apiUrl = running.apiUrl?.replace('localhost', '127.0.0.1') ?? '';
  const edgeUrl = `http://127.0.0.1:${edgePort}`;
  return {
    running,
    apiUrl,
    edgeUrl,
    edgePort,
    dataDir,
    async user(email, kind = {}) {
      const u = await findOrCreateUser(running.deps, email ?? `stack-${++users}-${Date.now()}@example.com`);
      const { token } = await createToken(running.deps, u.id, 'stack', undefined, kind);
      const org = await running.deps.db
        .selectFrom('organizations')
        .select('id')
        .where('personal_user_id', '=', u.id)
        .executeTakeFirstOrThrow();
      // Tests poll; the enterprise tier keeps them clear of the free plan's 100 requests an hour.
      await running.deps.db
        .updateTable('organizations')
        .set({ plan: 'enterprise' })
        .where('id', '=', org.id)
        .execute();
      return { token, orgId: org.id, userId: u.id };
    },
    client: (token) => createClient({ baseUrl: apiUrl, token }),
    fetchFromEdge(url, init = {}) {
      const u = new URL(url);
      return requestWithHost({
        origin: edgeUrl,
        host: u.host,
        path: `${u.pathname}${u.search}`,
        method: init.method ?? 'GET',
        headers: (init.headers as Record<string, string>) ?? {},
      });
    },
    async stop() {
      await running.stop();
      await database.drop();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits until deployment `id` is live or failed, and returns it as it then is. */
export function deploymentDone(
  api: ReturnType<Stack['client']>,
  id: string,
  timeoutMs = 90_000,
  intervalMs = 5,
): Promise<Deployment> {
  return waitFor(
    `deployment ${id} to finish`,
    async () => {
      const d = await api.deployments.get(id);
      return d.status === 'live' || d.status === 'failed' ? d : null;
    },
    timeoutMs,
    intervalMs,
  );
}
