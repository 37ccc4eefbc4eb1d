import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createArtifactReader,
  type ArtifactReader,
} from '../server/features/serving/edge/artifact-reader.ts';
import type { HostResolver, Resolution } from '../server/features/serving/edge/resolve-host.ts';
import { createEdgeServer } from '../server/features/serving/edge/server.ts';
import type { BlobStore } from '../server/platform/storage/blob-store.ts';
import { createDiskCache } from '../server/platform/storage/local-files.ts';
import { createS3BlobStore } from '../server/platform/storage/s3-blob-store.ts';
import { listen, storeSite } from '../test/helpers/edge.ts';
import { s3ServerMissing, startS3Server } from '../test/helpers/s3-server.ts';
import { ratio, table } from './lib.ts';

/** Files of each size in the site: every one asked for once cold, then `WARM` times. */
const SIZES = [
  { label: '8 KiB', bytes: 8 * 1024, count: 200 },
  { label: '1 MiB', bytes: 1024 * 1024, count: 30 },
];
const WARM = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Every host is the one site. */
function oneSite(artifactId: string): HostResolver {
  const r: Resolution = {
    kind: 'target',
    target: {
      projectId: 'prj_bench',
      deploymentId: 'dpl_bench',
      artifactId,
      kind: 'static',
      spa: false,
      environment: 'production',
    },
  };
  return { resolve: async () => r, peek: () => r, invalidate: () => {} };
}

function get(port: number, agent: Agent, path: string): Promise<number> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const req = request(
      { host: '127.0.0.1', port, path, agent, headers: { host: 'site.localhost' } },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? done(performance.now() - t0)
            : fail(new Error(`${path}: ${res.statusCode}`)),
        );
      },
    );
    req.on('error', fail);
    req.end();
  });
}

async function edgeOver(
  store: string | BlobStore,
  files: Record<string, Buffer>,
  reader: () => Promise<ArtifactReader | undefined>,
  local: string,
) {
  const artifactId = await storeSite(store, files);
  const artifacts = await reader();
  const server: Server = createEdgeServer({
    resolver: oneSite(artifactId),
    artifactsRoot: local,
    ...(artifacts ? { artifacts } : {}),
  });
  return { server, port: await listen(server) };
}

/**
 * An edge's first request for each file and its warm requests after, with the artifacts in the
 * local directory (the default) and in object storage (s3rver on this machine, read through the
 * edge's disk cache): medians, and each against the local directory's, in the same run.
 */
export async function benchObjectStorage(): Promise<string> {
  if (s3ServerMissing) return `skipped${s3ServerMissing}`;
  const dir = mkdtempSync(join(tmpdir(), 'slipway-bench-objects-'));
  const s3 = await startS3Server();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const files: Record<string, Buffer> = {};
    for (const { label, bytes, count } of SIZES) {
      for (let i = 0; i < count; i++) files[`${label.replace(' ', '')}/f${i}.bin`] = randomBytes(bytes);
    }
    const local = await edgeOver(
      join(dir, 'artifacts'),
      files,
      async () => undefined,
      join(dir, 'artifacts'),
    );
    const remoteStore = createS3BlobStore(s3.config('bench'));
    const remote = await edgeOver(
      remoteStore,
      files,
      async () =>
        createArtifactReader(
          await createDiskCache(remoteStore, {
            dir: join(dir, 'edge-cache', 'objects'),
            maxBytes: 1024 ** 3,
          }),
        ),
      join(dir, 'edge-cache'),
    );
    const rows = [];
    for (const { label, count } of SIZES) {
      const paths = Array.from({ length: count }, (_, i) => `/${label.replace(' ', '')}/f${i}.bin`);
      // First requests: each edge's own; then the warm ones taken in turn, so both see the same machine.
      const firstOf = async (port: number) => {
        const first: number[] = [];
        for (const p of paths) first.push(await get(port, agent, p));
        return median(first);
      };
      const l = { first: await firstOf(local.port), warm: 0 };
      const o = { first: await firstOf(remote.port), warm: 0 };
      const warm: [number[], number[]] = [[], []];
      for (let r = 0; r < WARM; r++) {
        for (const p of paths) {
          warm[0].push(await get(local.port, agent, p));
          warm[1].push(await get(remote.port, agent, p));
        }
      }
      l.warm = median(warm[0]);
      o.warm = median(warm[1]);
      rows.push(
        {
          file: label,
          store: 'local directory',
          'first ms': l.first.toFixed(2),
          'warm ms': l.warm.toFixed(2),
          'first vs local %': 100,
          'warm vs local %': 100,
        },
        {
          file: label,
          store: 'object storage',
          'first ms': o.first.toFixed(2),
          'warm ms': o.warm.toFixed(2),
          'first vs local %': ratio(o.first, l.first),
          'warm vs local %': ratio(o.warm, l.warm),
        },
      );
    }
    for (const e of [local, remote]) await new Promise((r) => e.server.close(r));
    return `${table(rows)}\n(${Object.keys(files).length} files; medians; object storage: s3rver on 127.0.0.1, first request = fetched from the bucket into the edge's disk cache)`;
  } finally {
    agent.destroy();
    await s3.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
