/**
 * The server side of the request-recording benchmark, in its own process: two edges over one
 * database and one deployment with a 10 KiB file, one recording every request into the
 * per-minute rollups (as `slipway serve` does), one not recording. Prints one JSON line, then
 * serves until killed; GET /recorded on the control port flushes and answers the recorded total.
 */
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../server/config.ts';
import { createHostResolver } from '../server/edge/resolve-host.ts';
import { createEdgeServer } from '../server/edge/server.ts';
import { createRequestRecorder } from '../server/monitoring/request-recorder.ts';
import { createDeps } from '../server/runtime.ts';
import { storeSite } from '../test/helpers/edge.ts';
import { newId } from '../server/lib/ids.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'slipway-bench-monitoring-'));
const deps = await createDeps(
  loadConfig({
    SLIPWAY_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
  }),
  { log: pino({ level: 'silent' }) },
);
const now = new Date().toISOString();
const artifactId = await storeSite(deps.config.artifactsDir, {
  'index.html': '<h1>bench</h1>\n',
  'file-10k.txt': 'x'.repeat(10 * 1024),
});
const orgId = newId('org');
const projectId = newId('prj');
const deploymentId = newId('dpl');
await deps.db
  .insertInto('organizations')
  .values({
    id: orgId,
    name: 'bench',
    display_name: 'bench',
    plan: 'free',
    personal_user_id: null,
    created_at: now,
    updated_at: now,
  })
  .execute();
await deps.db
  .insertInto('projects')
  .values({
    id: projectId,
    organization_id: orgId,
    name: 'bench',
    repository_url: 'https://example.com/bench.git',
    branch: 'main',
    framework: 'static',
    status: 'active',
    production_host: 'bench',
    production_deployment_id: null,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  })
  .execute();
await deps.db
  .insertInto('deployments')
  .values({
    id: deploymentId,
    project_id: projectId,
    source: 'git',
    use_cache: 1,
    status: 'live',
    target: 'production',
    branch: 'main',
    requested_commit: null,
    commit_hash: null,
    commit_message: null,
    message: null,
    author: null,
    host: 'bench-live',
    build_duration_ms: null,
    deploy_duration_ms: null,
    error_message: null,
    rollback_from: null,
    source_deployment_id: null,
    artifact_id: artifactId,
    runtime: JSON.stringify({ kind: 'static', spa: false }),
    created_by: null,
    created_at: now,
    updated_at: now,
    started_at: now,
    ready_at: now,
    promoted_at: null,
  })
  .execute();
await deps.db
  .updateTable('projects')
  .set({ production_deployment_id: deploymentId })
  .where('id', '=', projectId)
  .execute();

const recorder = createRequestRecorder(deps);
const recording = createEdgeServer({
  resolver: createHostResolver(deps),
  artifactsRoot: deps.config.artifactsDir,
  onRequest: (r) => recorder.record(r),
});
const plain = createEdgeServer({
  resolver: createHostResolver(deps),
  artifactsRoot: deps.config.artifactsDir,
});
const control = createServer((req, res) => {
  if (req.url !== '/recorded') return res.writeHead(404).end();
  void recorder
    .flush()
    .then(() =>
      deps.db
        .selectFrom('traffic_rollups')
        .where('span', '=', 'minute')
        .select((eb) => eb.fn.sum<string | number | null>('requests').as('n'))
        .executeTakeFirstOrThrow(),
    )
    .then((row) => res.end(String(Number(row.n ?? 0))));
});
const listen = (s: ReturnType<typeof createServer>) =>
  new Promise<number>((resolve) =>
    s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)),
  );
const [recordingPort, plainPort, controlPort] = await Promise.all([
  listen(recording),
  listen(plain),
  listen(control),
]);
process.stdout.write(
  JSON.stringify({
    recordingUrl: `http://127.0.0.1:${recordingPort}`,
    plainUrl: `http://127.0.0.1:${plainPort}`,
    controlUrl: `http://127.0.0.1:${controlPort}`,
    host: 'bench.localhost',
  }) + '\n',
);
const stop = () => {
  recording.close();
  plain.close();
  control.close();
  void recorder
    .close()
    .then(() => deps.store.close())
    .then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
