import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackup } from '../../server/features/backup/backup.ts';
import { restoreBackup } from '../../server/features/backup/restore.ts';
import { loadConfig } from '../../server/platform/config.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { databaseForTest, databaseUrlOf } from '../helpers/database.ts';
import { s3ServerMissing, startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';

const KEY = Buffer.alloc(32, 9).toString('base64');

/**
 * With artifacts in object storage, a backup names the bucket instead of copying it, and restores
 * only into a service that uses that bucket: the restored service serves the same deployment.
 */
describe.skipIf(Boolean(s3ServerMissing))(
  `backup with object storage${s3ServerMissing}`,
  { timeout: 180_000 },
  () => {
    let s3: S3Server;
    let s: Stack;
    let repo: GitRepo;
    const dirs: string[] = [];
    const tempDir = (prefix: string) => {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    };

    beforeAll(async () => {
      s3 = await startS3Server();
      repo = createGitRepo({ files: { 'index.html': '<h1>in the bucket</h1>' } });
    });
    afterAll(async () => {
      await s?.stop();
      await s3?.stop();
      repo?.remove();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('references the bucket, and the restored service serves from it', async () => {
      const storage = s3.env('site/');
      s = await startStack({ env: storage });
      const { token, orgId } = await s.user('owner@example.com');
      const api = s.client(token);
      const project = await api.projects.create({
        name: 'bucketed',
        repositoryUrl: repo.url,
        organizationId: orgId,
      });
      const done = await deploymentDone(api, (await api.deployments.create(project.id)).id);
      expect(done.status, done.errorMessage ?? '').toBe('live');
      const url = databaseUrlOf(s.dataDir);
      const sourceConfig = loadConfig({
        SLIPWAY_DATA_DIR: s.dataDir,
        SLIPWAY_ENCRYPTION_KEY: KEY,
        ...(url ? { DATABASE_URL: url } : {}),
        ...storage,
      });
      const lines: string[] = [];
      const made = await createBackup(sourceConfig, {
        dest: tempDir('slipway-backups-s3-'),
        includeKey: false,
        keep: undefined,
        now: new Date(),
        say: (l) => lines.push(l),
      });
      const bucket = `${s3.endpoint}/${s3.bucket}/site/`;
      expect(made.manifest).toMatchObject({ objectStorage: bucket, artifacts: [], files: 0 });
      expect(lines).toContain(`Artifacts live in object storage (${bucket}): referenced, not copied.`);
      expect(existsSync(join(made.dir, 'artifacts'))).toBe(false);
      await s.stop();

      const target = tempDir('slipway-restored-s3-');
      const database = await databaseForTest(undefined, target, false);
      const targetEnv = { SLIPWAY_DATA_DIR: target, SLIPWAY_ENCRYPTION_KEY: KEY, ...database.env };
      await expect(restoreBackup(loadConfig(targetEnv), made.dir, () => undefined)).rejects.toThrow(
        `This backup's artifacts live in object storage at ${bucket} (referenced, not copied): set SLIPWAY_OBJECT_STORAGE to that bucket and prefix`,
      );
      await expect(
        restoreBackup(loadConfig({ ...targetEnv, ...s3.env('other/') }), made.dir, () => undefined),
      ).rejects.toThrow(`(it is ${s3.endpoint}/${s3.bucket}/other/)`);
      expect(readdirSync(target).filter((f) => f.startsWith('slipway.db'))).toEqual([]);

      await restoreBackup(loadConfig({ ...targetEnv, ...storage }), made.dir, () => undefined);
      s = await startStack({ dataDir: target, env: storage });
      const page = await s.fetchFromEdge(done.url);
      expect(page.status).toBe(200);
      expect(await page.text()).toBe('<h1>in the bucket</h1>');
    });
  },
);
