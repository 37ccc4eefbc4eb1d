import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { loadConfig } from '../server/platform/config.ts';
import { closeDeps, createDeps } from '../server/runtime.ts';
import { createDeployment } from '../server/features/deployments/create-deployment.ts';
import { markBuilding, markDeploying, markLive } from '../server/features/deployments/deployment-state.ts';
import type { Actor, Deps } from '../server/platform/deps/deps.ts';
import { createProject } from '../server/features/deployments/projects/create-project.ts';
import { findOrCreateUser } from '../server/features/identity/users/find-or-create-user.ts';
import { createWebhook } from '../server/features/webhooks/create-webhook.ts';
import { startDeliveryWorker, type DeliveryWorker } from '../server/features/webhooks/delivery-worker.ts';
import { DELIVERY_JOB } from '../server/features/webhooks/delivery-job.ts';
import { table } from './lib.ts';

const CHANGES = 1000;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms = (v: number) => Math.round(v * 100) / 100;

/** A receiver on 127.0.0.1 that notes when each delivery (by deployment and event) arrived. */
async function startReceiver() {
  const arrived = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        event: string;
        data: { deploymentId: string };
      };
      const key = `${body.data.deploymentId} ${body.event}`;
      arrived.set(key, at);
      waiters.get(key)?.();
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrived,
    received: (key: string) =>
      arrived.has(key) ? Promise.resolve() : new Promise<void>((r) => waiters.set(key, r)),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A receiver that never answers; `holding(n)` resolves once n requests are hanging. */
async function startHangingReceiver() {
  let count = 0;
  let want = Infinity;
  let reached: () => void = () => {};
  const server = createServer(() => {
    if (++count >= want) reached();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
    holding: (n: number) =>
      count >= n
        ? Promise.resolve()
        : new Promise<void>((r) => {
            want = n;
            reached = r;
          }),
  };
}

/** The floor: one POST of a similar body to the same receiver, without the database or the worker. */
async function barePost(url: string): Promise<number> {
  const body = JSON.stringify({
    event: 'deployment.building',
    timestamp: '',
    data: { deploymentId: 'bare' },
  });
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(body);
  });
  return performance.now() - started;
}

/**
 * Runs `CHANGES` deployment state changes (created, building, deploying, live; 250 deployments)
 * and measures from each change's commit to the receiver having the delivery. The commit time is
 * taken where the service wakes the deliverers, right after its transaction committed.
 * `idle`: one change at a time with the worker idle before each (the latency the issue targets);
 * `one at a time`: each change once the previous one arrived, while other attempts may be in
 * flight (beside receivers that hang); `burst`: back to back, as fast as the changes commit.
 */
async function run(
  deps: Deps,
  worker: DeliveryWorker,
  actor: Actor,
  projectId: string,
  rx: Receiver,
  mode: 'idle' | 'one at a time' | 'burst',
  changes = CHANGES,
) {
  let lastCommit = NaN;
  const notify = deps.queue.notify.bind(deps.queue);
  deps.queue.notify = (kind) => {
    if (kind === DELIVERY_JOB) lastCommit = performance.now();
    notify(kind);
  };
  const committed = new Map<string, number>();
  const change = async (deploymentId: string | null, event: string, apply: () => Promise<{ id: string }>) => {
    if (mode === 'idle') await worker.idle();
    const { id } = await apply();
    const key = `${deploymentId ?? id} ${event}`;
    committed.set(key, lastCommit);
    if (mode !== 'burst') await rx.received(key);
    return id;
  };
  const started = performance.now();
  try {
    for (let i = 0; i < changes / 4; i++) {
      const id = await change(null, 'deployment.created', () =>
        createDeployment(deps, actor, projectId, { message: `bench ${i}` }),
      );
      await change(id, 'deployment.building', () => markBuilding(deps, id));
      await change(id, 'deployment.deploying', () =>
        markDeploying(deps, id, { buildDurationMs: 1, artifactId: 'bench' }),
      );
      await change(id, 'deployment.success', () => markLive(deps, id, { deployDurationMs: 1 }));
    }
    await Promise.all([...committed.keys()].map((k) => rx.received(k)));
  } finally {
    deps.queue.notify = notify;
  }
  const elapsed = performance.now() - started;
  const latencies = [...committed].map(([k, at]) => rx.arrived.get(k)! - at).sort((a, b) => a - b);
  return { latencies, elapsed };
}

/** `npm run bench webhooks`: commit-to-receipt latency of webhook deliveries through a real SQLite store. */
export async function benchWebhooks(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'slipway-bench-webhooks-'));
  const deps = await createDeps(
    loadConfig({
      SLIPWAY_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true',
    }),
    { log: pino({ level: 'silent' }) },
  );
  const rx = await startReceiver();
  const worker = startDeliveryWorker(deps);
  try {
    const user = await findOrCreateUser(deps, 'bench@example.com');
    const actor: Actor = { userId: user.id, email: user.email, tokenId: 'bench' };
    const org = await deps.db
      .selectFrom('organizations')
      .select('id')
      .where('personal_user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    const project = await createProject(deps, actor, {
      name: 'bench-webhooks',
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: org.id,
      framework: 'static',
    });
    await createWebhook(deps, actor, project.id, {
      url: rx.url,
      events: ['deployment.created', 'deployment.building', 'deployment.deploying', 'deployment.success'],
      secret: 'bench-secret-0123456789',
    });

    const bare: number[] = [];
    for (let i = 0; i < 200; i++) bare.push(await barePost(rx.url));
    bare.sort((a, b) => a - b);
    const idle = await run(deps, worker, actor, project.id, rx, 'idle');
    const burst = await run(deps, worker, actor, project.id, rx, 'burst');
    // Another tenant's 16 receivers that never answer, two attempts each in flight.
    const hanging = await startHangingReceiver();
    const other = await createProject(deps, actor, {
      name: 'bench-hanging',
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: org.id,
      framework: 'static',
    });
    for (let i = 0; i < 16; i++) {
      await createWebhook(deps, actor, other.id, {
        url: `${hanging.url}/${i}`,
        events: ['deployment.created'],
        secret: 'bench-secret-0123456789',
      });
    }
    for (let i = 0; i < 3; i++) await createDeployment(deps, actor, other.id, { message: `hang ${i}` });
    await hanging.holding(32);
    const beside = await run(deps, worker, actor, project.id, rx, 'one at a time', 200);
    hanging.close();

    const row = (name: string, sorted: number[], rate?: number) => ({
      case: name,
      n: sorted.length,
      p50_ms: ms(percentile(sorted, 50)),
      p99_ms: ms(percentile(sorted, 99)),
      max_ms: ms(sorted[sorted.length - 1] ?? NaN),
      per_s: rate === undefined ? '' : Math.round(rate),
    });
    return [
      `Webhook delivery, commit to receipt (${CHANGES} deployment state changes, SQLite, worker in-process, receiver on 127.0.0.1)`,
      table([
        row('bare POST to the receiver', bare),
        row('one change at a time (idle worker)', idle.latencies, (CHANGES * 1000) / idle.elapsed),
        row('back to back (burst)', burst.latencies, (CHANGES * 1000) / burst.elapsed),
        row('one at a time, 16 other receivers hanging', beside.latencies),
      ]),
      'Target: p50 < 20 ms with an idle worker (the issue asks a delivery to start within 50 ms of the commit).',
    ].join('\n');
  } finally {
    await worker.stop(0);
    await rx.close();
    await closeDeps(deps);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
