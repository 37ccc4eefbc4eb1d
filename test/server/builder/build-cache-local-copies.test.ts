import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createStoredBuildCacheStore } from '../../../server/features/builds/stored-build-cache.ts';
import { loadConfig } from '../../../server/platform/config.ts';
import { createLocalBlobStore } from '../../../server/platform/storage/local-blob-store.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const HOUR = 3_600_000;
const LANE = 'production:main';

/** A cache of one file of `bytes` bytes, its content naming it. */
const fill =
  (name: string, bytes = 1000) =>
  async (into: string) => {
    mkdirSync(join(into, 'home', '.npm'), { recursive: true });
    writeFileSync(join(into, 'home', '.npm', 'f'), name.padEnd(bytes, '.'));
    return { 'home/.npm': { files: 1, bytes } };
  };

/** The projects that have a copy on this machine's disk, each with its file's first bytes. */
function copies(localDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const project of readdirSync(localDir).filter((n) => n.startsWith('prj_'))) {
    for (const name of readdirSync(join(localDir, project))) {
      if (!name.endsWith('.json')) continue;
      const dir = join(localDir, project, name.slice(0, -'.json'.length));
      out[project] = readFileSync(join(dir, 'home', '.npm', 'f'), 'utf8').replace(/\.+$/, '');
    }
  }
  return out;
}

/** Sets when a project's copy was last used (its description's modified time). */
function usedAt(localDir: string, project: string, at: number) {
  for (const name of readdirSync(join(localDir, project))) {
    if (name.endsWith('.json')) utimesSync(join(localDir, project, name), at / 1000, at / 1000);
  }
}

describe('build caches from object storage: the copies on a worker’s disk', () => {
  it('stay within the bound, the least recently used out first, never one a build is using', async () => {
    // The "bucket" is a blob store in a directory: real files, and the same code as with S3.
    const blobs = createLocalBlobStore(tempDir());
    const localDir = tempDir();
    // Three copies of 1000 bytes do not fit in 2500: each store opened on the folder (a build
    // job's, the monitoring run's) shares what this process's builds hold.
    const open = () =>
      createStoredBuildCacheStore(blobs, { maxBytesPerProject: 10_000, localDir, localMaxBytes: 2500 });
    await open().save('prj_a', LANE, 'k', 10_000, fill('a'));
    await open().save('prj_b', LANE, 'k', 10_000, fill('b'));
    expect(copies(localDir)).toEqual({ prj_a: 'a', prj_b: 'b' });

    // A build restores a's cache and is still running (it started three hours ago); b was used since.
    const inUse = await open().find('prj_a', [{ lane: LANE }], 'k');
    expect(inUse).toMatchObject({ key: 'k', bytes: 1000 });
    usedAt(localDir, 'prj_a', Date.now() - 3 * HOUR);
    usedAt(localDir, 'prj_b', Date.now() - 2 * HOUR);

    // A third copy: a is the least recently used but in use, so b goes.
    await open().save('prj_c', LANE, 'k', 10_000, fill('c'));
    expect(copies(localDir)).toEqual({ prj_a: 'a', prj_c: 'c' });
    expect(readFileSync(join(inUse!.dir, 'home', '.npm', 'f'), 'utf8')).toMatch(/^a\.+$/);

    // The build ends: a's copy may go now, and is the first to.
    inUse!.release!();
    inUse!.release!(); // once is what counts
    await open().save('prj_d', LANE, 'k', 10_000, fill('d'));
    expect(copies(localDir)).toEqual({ prj_c: 'c', prj_d: 'd' });
    expect(existsSync(inUse!.dir)).toBe(false);

    // b is still in the store: a build of it fetches it again, and c (now the least recently used) goes.
    usedAt(localDir, 'prj_c', Date.now() - HOUR);
    const again = await open().find('prj_b', [{ lane: LANE }], 'k');
    expect(readFileSync(join(again!.dir, 'home', '.npm', 'f'), 'utf8')).toMatch(/^b\.+$/);
    expect(copies(localDir)).toEqual({ prj_b: 'b', prj_d: 'd' });
    again!.release!();

    // Two builds hold one copy: it stays until both have ended.
    const one = await open().find('prj_d', [{ lane: LANE }], 'k');
    const two = await open().find('prj_d', [{ lane: LANE }], 'k');
    usedAt(localDir, 'prj_d', Date.now() - 5 * HOUR);
    one!.release!();
    await open().save('prj_e', LANE, 'k', 10_000, fill('e'));
    expect(copies(localDir)).toEqual({ prj_d: 'd', prj_e: 'e' });
    two!.release!();
    await open().save('prj_f', LANE, 'k', 10_000, fill('f'));
    expect(copies(localDir)).toEqual({ prj_e: 'e', prj_f: 'f' });
  });

  it('a restarted worker counts the copies already on its disk, and removes what an interrupted unpack left', async () => {
    const blobs = createLocalBlobStore(tempDir());
    const localDir = tempDir();
    const unbounded = createStoredBuildCacheStore(blobs, { maxBytesPerProject: 10_000, localDir });
    for (const p of ['prj_a', 'prj_b', 'prj_c']) await unbounded.save(p, LANE, 'k', 10_000, fill(p.slice(4)));
    expect(Object.keys(copies(localDir))).toEqual(['prj_a', 'prj_b', 'prj_c']);
    usedAt(localDir, 'prj_a', Date.now() - 2 * HOUR);
    usedAt(localDir, 'prj_b', Date.now() - HOUR);
    // Left by an unpack that stopped two hours ago.
    const leftover = join(
      localDir,
      'prj_a',
      '000000000000001-5-0123456789abcdef-0123456789ab.0a0b0c0d0e0f.tmp',
    );
    mkdirSync(leftover);
    utimesSync(leftover, (Date.now() - 2 * HOUR) / 1000, (Date.now() - 2 * HOUR) / 1000);

    const restarted = createStoredBuildCacheStore(blobs, {
      maxBytesPerProject: 10_000,
      localDir,
      localMaxBytes: 2000,
    });
    await restarted.save('prj_d', LANE, 'k', 10_000, fill('d'));
    expect(copies(localDir)).toEqual({ prj_c: 'c', prj_d: 'd' });
    expect(existsSync(leftover)).toBe(false);
  });

  it('SLIPWAY_BUILD_CACHE_LOCAL_MAX sets the bound: 10GiB by default', () => {
    expect(loadConfig({ SLIPWAY_DATA_DIR: tempDir() }).buildCache.localMaxBytes).toBe(10 * 1024 ** 3);
    expect(
      loadConfig({ SLIPWAY_DATA_DIR: tempDir(), SLIPWAY_BUILD_CACHE_LOCAL_MAX: '500MiB' }).buildCache
        .localMaxBytes,
    ).toBe(500 * 1024 ** 2);
  });
});
