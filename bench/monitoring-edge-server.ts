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
import { loadConfig } from '../server/platform/config.ts';
import { createHostResolver } from '../server/features/serving/edge/resolve-host.ts';
import { createEdgeServer } from '../server/features/serving/edge/server.ts';
import { createRequestRecorder } from '../server/features/monitoring/request-recorder.ts';
import { closeDeps, createDeps } from '../server/runtime.ts';
import { insertLiveSites, organizationRow, storeSite } from '../test/helpers/edge.ts';
import { newId } from '../server/core/ids.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'slipway-bench-monitoring-'));
const deps = await createDeps(
  loadConfig({
    SLIPWAY_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
  }),
  { log: pino({ level: 'silent' }) },
);
const artifactId = await storeSite(deps.config.artifactsDir, {
  'index.html': '<h1>bench</h1>\n',
  'file-10k.txt': 'x'.repeat(10 * 1024),
});
const orgId = newId('org');
await deps.db.insertInto('organizations').values(organizationRow(orgId)).execute();
await insertLiveSites(deps.db, orgId, artifactId, ['bench']);

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
    .then(() => closeDeps(deps))
    .then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
