import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../server/platform/config.ts';
import { hashKey } from '../../../server/platform/storage/blob-store.ts';
import { blobStoreOf } from '../../../server/platform/storage/open-blob-store.ts';
import { runShell } from '../../helpers/process.ts';
import { s3ServerMissing, startS3Server, type S3Server } from '../../helpers/s3-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const ROOT = resolve(import.meta.dirname, '../../..');

/** The first sh block after `marker` in a doc. */
function block(doc: string, marker: string): string {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const at = text.indexOf(marker);
  expect(at, marker).toBeGreaterThan(-1);
  const start = text.indexOf('```sh\n', at) + '```sh\n'.length;
  return text.slice(start, text.indexOf('\n```', start));
}

/**
 * The docs' object-storage settings, run as written in a shell (the server's address and its
 * credentials are the things changed: s3rver on this machine stands in for MinIO), then read by
 * the service's configuration and used to write and read an object in the bucket they name.
 */
describe.skipIf(Boolean(s3ServerMissing))(`the documented object-storage settings${s3ServerMissing}`, () => {
  let s3: S3Server;
  beforeAll(async () => {
    s3 = await startS3Server(['slipway-artifacts', 'slipway']);
  });
  afterAll(() => s3?.stop());

  const cases: [string, string, (s: string) => string][] = [
    [
      'docs/scaling.md',
      '## Object storage',
      (s) =>
        s
          .replaceAll('http://minio.internal:9000', s3.endpoint)
          .replace('KEY_ID=slipway', 'KEY_ID=S3RVER')
          .replace('SECRET=change-me-to-a-long-secret', 'SECRET=S3RVER'),
    ],
    [
      'docs/operating.md',
      '### Where artifacts and uploads are kept',
      (s) => s.replaceAll('http://127.0.0.1:9000', s3.endpoint).replaceAll('minioadmin', 'S3RVER'),
    ],
  ];
  for (const [doc, marker, local] of cases) {
    it(`${doc}: ${marker}`, async () => {
      const script = local(block(doc, marker));
      const run = await runShell(`set -a\n${script}\nenv`, ROOT, { PATH: process.env.PATH });
      expect(run.code, run.stderr).toBe(0);
      const env = Object.fromEntries(
        run.stdout
          .split('\n')
          .filter((l) => /^(SLIPWAY|AWS)_/.test(l))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      const config = loadConfig({ ...env, SLIPWAY_DATA_DIR: tempDir() });
      expect(config.objectStorage?.bucketUrl.startsWith(s3.endpoint)).toBe(true);
      if (doc === 'docs/operating.md') expect(config.buildCache.localMaxBytes).toBe(50 * 1024 ** 3);
      const store = blobStoreOf(config);
      const key = hashKey('blobs', 'a'.repeat(64));
      expect(await store.putIfAbsent(key, { bytes: doc })).toBe(true);
      expect((await store.read(key))?.toString()).toBe(doc);
    });
  }
});
