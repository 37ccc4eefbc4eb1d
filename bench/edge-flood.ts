import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createArtifactStore } from '../server/features/builds/artifacts.ts';
import { createArtifactReader } from '../server/features/serving/edge/artifact-reader.ts';
import { createCompressedCache } from '../server/features/serving/edge/compression.ts';
import type { Target } from '../server/features/serving/edge/resolve-host.ts';
import { createStaticServer } from '../server/features/serving/edge/static.ts';
import { table } from './lib.ts';

const WORDS = 'function const return import export default async await value state render props'.split(' ');

/** `bytes` of script-like text, different for every seed. */
function script(seed: number, bytes: number): string {
  let x = seed * 2654435761 + 1;
  let out = `/* file ${seed} */`;
  while (out.length < bytes) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out += `${WORDS[x % WORDS.length]}${x % 97}${x % 10 === 0 ? '\n' : ' '}`;
  }
  return out.slice(0, bytes);
}

async function site(root: string, name: string, files: Record<string, string>) {
  const dir = join(root, name);
  mkdirSync(join(dir, 'assets'), { recursive: true });
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  const { artifactId } = await createArtifactStore(join(root, 'artifacts')).storeDirectory(dir, {
    maxBytes: 1 << 30,
    maxFiles: 10_000,
  });
  return artifactId;
}

const fetchTime = (url: string, host: string) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now();
    httpGet(url, { headers: { host, 'accept-encoding': 'br, gzip' }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - started));
    }).on('error', reject);
  });

/**
 * `npm run bench edge-flood`: one project requests 40 new 256 KiB scripts at once (each a
 * Brotli job) while another project's 20 new 4 KiB scripts are requested one by one; the quiet
 * project's latencies beside the same requests with no flood, in the same run.
 */
export async function benchEdgeFlood(): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'slipway-bench-flood-'));
  const flood = Object.fromEntries(
    Array.from({ length: 40 }, (_, i) => [`assets/chunk-${i}.js`, script(i, 256 * 1024)]),
  );
  const quiet = (round: number) =>
    Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [`assets/page-${i}.js`, script(10_000 * round + i, 4 * 1024)]),
    );
  const targets = new Map<string, Target>();
  const target = (artifactId: string): Target => ({
    projectId: 'prj_bench',
    deploymentId: 'dpl_bench',
    artifactId,
    kind: 'static',
    spa: false,
    environment: 'production',
  });
  targets.set('flood', target(await site(root, 'flood', flood)));
  targets.set('alone', target(await site(root, 'alone', quiet(1))));
  targets.set('beside', target(await site(root, 'beside', quiet(2))));
  const compressed = createCompressedCache(join(root, 'artifacts'));
  const files = createStaticServer({ artifacts: createArtifactReader(join(root, 'artifacts')), compressed });
  const server = createServer((req, res) => {
    void files.serve(req, res, targets.get(req.headers.host!)!, { bytes: 0 });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const quietRun = async (host: string) => {
    const times: number[] = [];
    for (const path of Object.keys(quiet(1))) times.push(await fetchTime(`${base}/${path}`, host));
    return times.sort((a, b) => a - b);
  };
  try {
    const alone = await quietRun('alone');
    const flooding = Promise.all(Object.keys(flood).map((p) => fetchTime(`${base}/${p}`, 'flood')));
    const beside = await quietRun('beside');
    const floodTimes = (await flooding).sort((a, b) => a - b);
    const row = (name: string, sorted: number[]) => ({
      case: name,
      n: sorted.length,
      p50_ms: Math.round(sorted[Math.floor(sorted.length / 2)]! * 10) / 10,
      p99_ms: Math.round(sorted[Math.ceil(sorted.length * 0.99) - 1]! * 10) / 10,
    });
    return [
      'Edge: first requests of new files while another project floods 40 new 256 KiB scripts',
      table([
        row('quiet project alone (baseline)', alone),
        row('quiet project beside the flood', beside),
        row('the flood itself', floodTimes),
      ]),
    ].join('\n');
  } finally {
    compressed.stop();
    server.close();
    rmSync(root, { recursive: true, force: true });
  }
}
