import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { databaseForTest, databaseUrlOf, testDialect } from '../helpers/database.ts';
import { deploymentDone, startStack, type Stack } from '../helpers/stack.ts';

const BIN = resolve(import.meta.dirname, '../../bin/slipway.js');
/** The key startStack gives its services. */
const KEY = Buffer.alloc(32, 9).toString('base64');

/** Runs the CLI with exactly `env` (plus PATH), as an operator would from a shell. */
function slipway(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/**
 * `slipway backup` while a real service runs (a deployed site and a secret), then `slipway
 * restore` into a new, empty service: it serves the same deployment at the same URL and reads the
 * secret. On SQLite, and on PostgreSQL in the suite's PostgreSQL run (pg_dump and pg_restore).
 */
describe(`backup and restore (${testDialect()})`, { timeout: 180_000 }, () => {
  let s: Stack;
  let repo: GitRepo;
  let dest: string;
  let sourceEnv: Record<string, string>;
  let backupDir: string;
  let keyBackupDir: string;
  let keyDest: string;
  let deployment: { id: string; url: string };
  let projectId: string;
  let target: string | undefined;

  beforeAll(async () => {
    repo = createGitRepo({ files: { 'index.html': '<h1>kept safe</h1>' } });
    s = await startStack();
    dest = mkdtempSync(join(tmpdir(), 'slipway-backups-'));
    keyDest = mkdtempSync(join(tmpdir(), 'slipway-backups-key-'));
    const { token, orgId } = await s.user('owner@example.com');
    const api = s.client(token);
    const project = await api.projects.create({
      name: 'kept',
      repositoryUrl: repo.url,
      organizationId: orgId,
    });
    projectId = project.id;
    await api.env.create(project.id, { key: 'API_SECRET', value: 's3cr3t-value', encrypted: true });
    const created = await api.deployments.create(project.id);
    const done = await deploymentDone(api, created.id);
    expect(done.status, done.errorMessage ?? '').toBe('live');
    deployment = { id: done.id, url: done.url };
    const url = databaseUrlOf(s.dataDir);
    sourceEnv = {
      SLIPWAY_DATA_DIR: s.dataDir,
      SLIPWAY_ENCRYPTION_KEY: KEY,
      ...(url ? { DATABASE_URL: url } : {}),
    };
  });
  afterAll(async () => {
    await s?.stop();
    repo?.remove();
    if (dest) rmSync(dest, { recursive: true, force: true });
    if (keyDest) rmSync(keyDest, { recursive: true, force: true });
    if (target) rmSync(target, { recursive: true, force: true });
  });

  it('backs up while the service runs, keeps the newest --keep, and leaves the key out', async () => {
    const first = await slipway(['backup', dest, '--keep', '1'], sourceEnv);
    expect(first.stderr).toContain('Backed up to');
    expect(first.code, first.stderr).toBe(0);
    const second = await slipway(['backup', dest, '--keep', '1'], sourceEnv);
    expect(second.code, second.stderr).toBe(0);
    backupDir = second.stdout.trim();
    // Names have a second's resolution: the first may have been replaced in place.
    expect(readdirSync(dest)).toEqual([backupDir.split('/').at(-1)]);
    expect(second.stderr).toContain('is not in the backup: keep it apart');
    expect(existsSync(join(backupDir, 'encryption.key'))).toBe(false);
    expect(statSync(backupDir).mode & 0o077).toBe(0);
    const files = readdirSync(backupDir).sort();
    expect(files).toEqual(
      [
        'artifacts',
        testDialect() === 'postgres' ? 'database.pgdump' : 'database.sqlite',
        'manifest.json',
      ].sort(),
    );

    const withKey = await slipway(['backup', keyDest, '--include-key'], sourceEnv);
    expect(withKey.code, withKey.stderr).toBe(0);
    keyBackupDir = withKey.stdout.trim();
    expect(withKey.stderr).toContain('Warning: the backup holds the encryption key');
    expect(statSync(join(keyBackupDir, 'encryption.key')).mode & 0o777).toBe(0o600);

    const bad = await slipway(['backup', dest, '--keep', '0'], sourceEnv);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--keep must be a whole number of backups of at least 1');
  });

  it('restores into an empty service that serves the same deployment at the same URL', async () => {
    await s.stop();
    target = mkdtempSync(join(tmpdir(), 'slipway-restored-'));
    // On PostgreSQL: the empty database the restored service will use.
    const database = await databaseForTest(undefined, target, false);
    const targetEnv = { SLIPWAY_DATA_DIR: target, ...database.env };

    const noKey = await slipway(['restore', backupDir], targetEnv);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain('This backup does not hold the encryption key (fingerprint');
    const wrongKey = await slipway(['restore', backupDir], {
      ...targetEnv,
      SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
    });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain("is not the backed-up service's");
    expect(existsSync(join(target, 'slipway.db'))).toBe(false);

    // The backup made with --include-key restores with no key configured, and leaves it in the data dir.
    const restored = await slipway(['restore', keyBackupDir], targetEnv);
    expect(restored.code, restored.stderr).toBe(0);
    expect(readFileSync(join(target, 'encryption.key'), 'utf8').trim()).toBe(KEY);
    expect(restored.stderr).toContain('Start the service: slipway serve');
    const again = await slipway(['restore', backupDir], { ...targetEnv, SLIPWAY_ENCRYPTION_KEY: KEY });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/restore into an empty/);

    s = await startStack({ dataDir: target });
    const { token } = await s.user('owner@example.com');
    const api = s.client(token);
    const back = await api.deployments.get(deployment.id);
    expect(back).toMatchObject({ id: deployment.id, status: 'live' });
    // The same host (the port is each test service's own edge port).
    expect(new URL(back.url).hostname).toBe(new URL(deployment.url).hostname);
    const page = await s.fetchFromEdge(deployment.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('<h1>kept safe</h1>');
    expect(await api.env.export(projectId, { format: 'json' })).toEqual({ API_SECRET: 's3cr3t-value' });
  });
});
