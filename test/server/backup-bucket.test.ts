import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBackupBucket } from '../../server/features/backup/backup-bucket.ts';
import { databaseForTest, databaseUrlOf, testDialect } from '../helpers/database.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { runShell } from '../helpers/process.ts';
import { s3ServerMissing, startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** The key startStack gives its services. */
const KEY = Buffer.alloc(32, 9).toString('base64');

/** The sh blocks after `marker` in a doc, up to the next heading. */
function blocks(doc: string, marker: string): string[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const at = text.indexOf(marker);
  expect(at, marker).toBeGreaterThan(-1);
  const section = text.slice(at, text.indexOf('\n#', at));
  return [...section.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
}

/** The next second on the clock: backups are named to the second. */
async function nextSecond(): Promise<void> {
  const next = Math.floor(Date.now() / 1000) * 1000 + 1000;
  while (Date.now() < next) await new Promise((r) => setTimeout(r, next - Date.now()));
}

/**
 * docs/operating.md's "Backups in a bucket", run as written in a shell against s3rver (its
 * address and credentials are what change): a running service is backed up into the bucket,
 * `--keep` works there, and `slipway restore` of the printed URL brings back an empty service
 * that serves the same deployment at the same URL and reads the same secret. On SQLite, and on
 * PostgreSQL in the suite's PostgreSQL run.
 */
describe.skipIf(Boolean(s3ServerMissing))(
  `backups in a bucket (${testDialect()})${s3ServerMissing}`,
  { timeout: 180_000 },
  () => {
    let s3: S3Server;
    let s: Stack;
    let repo: GitRepo;
    let bin: string;
    let target: string | undefined;
    let deployment: { id: string; url: string };
    let projectId: string;
    const [block, restoreBlock] = blocks('docs/operating.md', '**Backups in a bucket**');
    const local = (script: string) =>
      script
        .replaceAll('http://127.0.0.1:9000', s3.endpoint)
        .replace('AWS_ACCESS_KEY_ID=backup-writer', 'AWS_ACCESS_KEY_ID=S3RVER')
        .replace('AWS_SECRET_ACCESS_KEY=change-me-to-a-long-secret', 'AWS_SECRET_ACCESS_KEY=S3RVER');
    const creds = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
    /** The whole bucket, read as an operator's S3 client would. */
    const bucket = () => openBackupBucket(`s3://slipway-backups?endpoint=${s3.endpoint}`, creds).store;
    const keys = async () => {
      const out: string[] = [];
      for await (const o of bucket().list('nightly/')) out.push(o.key);
      return out.sort();
    };
    const nameOf = (url: string) => /slipway-backup-\d{8}T\d{6}Z/.exec(url)![0];

    beforeAll(async () => {
      s3 = await startS3Server(['slipway-backups']);
      // `slipway` on PATH, as an installed service has it.
      bin = mkdtempSync(join(tmpdir(), 'slipway-bin-'));
      writeFileSync(
        join(bin, 'slipway'),
        `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin', 'slipway.js')}" "$@"\n`,
      );
      chmodSync(join(bin, 'slipway'), 0o755);
      repo = createGitRepo({ files: { 'index.html': '<h1>kept in a bucket</h1>' } });
      s = await startStack();
      const { token, orgId } = await s.user('owner@example.com');
      const api = s.client(token);
      const project = await api.projects.create({
        name: 'bucketkept',
        repositoryUrl: repo.url,
        organizationId: orgId,
      });
      projectId = project.id;
      await api.env.create(project.id, { key: 'API_SECRET', value: 'kept-5e1f', encrypted: true });
      const done = await deploymentDone(api, (await api.deployments.create(project.id)).id);
      expect(done.status, done.errorMessage ?? '').toBe('live');
      deployment = { id: done.id, url: done.url };
    });
    afterAll(async () => {
      await s?.stop();
      await s3?.stop();
      repo?.remove();
      if (bin) rmSync(bin, { recursive: true, force: true });
      if (target) rmSync(target, { recursive: true, force: true });
    });

    it('backs up a running service into the bucket, keeps the newest, and restores into an empty service at the same URLs', async () => {
      const url = databaseUrlOf(s.dataDir);
      const serviceEnv = {
        PATH: `${bin}:${process.env.PATH ?? ''}`,
        LOG_LEVEL: 'silent' as const,
        SLIPWAY_DATA_DIR: s.dataDir,
        SLIPWAY_ENCRYPTION_KEY: KEY,
        ...(url ? { DATABASE_URL: url } : {}),
      };
      // A backup that stopped half-way, before the others: not a backup, and removed by --keep.
      await bucket().putIfAbsent('nightly/slipway-backup-20200101T000000Z/database.sqlite', {
        bytes: 'half',
      });

      const first = await runShell(local(block!), ROOT, serviceEnv);
      expect(first.code, first.stderr).toBe(0);
      const firstUrl = first.stdout.trim();
      expect(firstUrl).toMatch(
        new RegExp(`^s3://slipway-backups/nightly/slipway-backup-\\d{8}T\\d{6}Z\\?endpoint=${s3.endpoint}$`),
      );
      const name = nameOf(firstUrl);
      const files = (await keys()).filter((k) => k.startsWith(`nightly/${name}/`));
      expect(files).toContain(`nightly/${name}/manifest.json`);
      expect(files).toContain(
        `nightly/${name}/database.${testDialect() === 'postgres' ? 'pgdump' : 'sqlite'}`,
      );
      expect(files.some((k) => k.startsWith(`nightly/${name}/artifacts/manifests/art_`))).toBe(true);
      expect(files.some((k) => k.startsWith(`nightly/${name}/artifacts/blobs/`))).toBe(true);
      expect(files).not.toContain(`nightly/${name}/encryption.key`);
      // Nothing left in the data dir: the database's copy was sent and removed.
      expect((await runShell('ls -A', s.dataDir, {})).stdout).not.toContain('.backup-');

      // --keep 1 a second later: the newest only, and the half-way one is gone too.
      await nextSecond();
      const second = await runShell(
        `slipway backup 's3://slipway-backups/nightly?endpoint=${s3.endpoint}' --keep 1`,
        ROOT,
        { ...serviceEnv, ...creds },
      );
      expect(second.code, second.stderr).toBe(0);
      const secondUrl = second.stdout.trim();
      const newest = nameOf(secondUrl);
      expect(second.stderr).toContain(`Removed the older backup ${firstUrl} (--keep 1).`);
      expect(new Set((await keys()).map((k) => k.split('/')[1]))).toEqual(new Set([newest]));

      // Wrong credentials and a URL that names no backup: clear errors, nothing written.
      const denied = await runShell(`slipway restore '${secondUrl}'`, ROOT, {
        ...serviceEnv,
        AWS_ACCESS_KEY_ID: 'nobody',
        AWS_SECRET_ACCESS_KEY: 'wrong',
      });
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/slipway: GET manifest\.json in s3:\/\/.*: 403/);

      await s.stop();
      target = mkdtempSync(join(tmpdir(), 'slipway-restored-bucket-'));
      const database = await databaseForTest(undefined, target, false);
      const targetEnv = {
        PATH: serviceEnv.PATH,
        LOG_LEVEL: 'silent' as const,
        SLIPWAY_DATA_DIR: target,
        SLIPWAY_ENCRYPTION_KEY: KEY,
        ...database.env,
        ...creds,
      };
      const missing = await runShell(
        `slipway restore 's3://slipway-backups/nightly/slipway-backup-20200101T000000Z?endpoint=${s3.endpoint}'`,
        ROOT,
        targetEnv,
      );
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('is not a Slipway backup: it has no manifest.json');

      const restore = local(restoreBlock!).replace('slipway-backup-20261126T201500Z', newest);
      const restored = await runShell(restore, ROOT, targetEnv);
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stderr).toContain('Start the service: slipway serve');
      expect((await runShell('ls -A', target, {})).stdout).not.toContain('.restore-');

      s = await startStack({ dataDir: target });
      const { token } = await s.user('owner@example.com');
      const api = s.client(token);
      expect(await api.deployments.get(deployment.id)).toMatchObject({ id: deployment.id, status: 'live' });
      expect(new URL((await api.deployments.get(deployment.id)).url).hostname).toBe(
        new URL(deployment.url).hostname,
      );
      const page = await s.fetchFromEdge(deployment.url);
      expect(page.status).toBe(200);
      expect(await page.text()).toBe('<h1>kept in a bucket</h1>');
      expect(await api.env.export(projectId, { format: 'json' })).toEqual({ API_SECRET: 'kept-5e1f' });
    });
  },
);
