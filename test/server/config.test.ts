import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/platform/config.ts';

describe('configuration of jobs and shutdown', () => {
  const base = { SLIPWAY_DATA_DIR: '/tmp/slipway-config-test' };

  it('defaults to a 60 s lease and a 10 s shutdown grace, and reads durations', () => {
    expect(loadConfig(base)).toMatchObject({ jobLeaseMs: 60_000, shutdownGraceMs: 10_000 });
    expect(loadConfig({ ...base, SLIPWAY_JOB_LEASE: '90s', SLIPWAY_SHUTDOWN_GRACE: '2m' })).toMatchObject({
      jobLeaseMs: 90_000,
      shutdownGraceMs: 120_000,
    });
  });

  it('refuses a malformed duration, naming the variable', () => {
    for (const name of ['SLIPWAY_JOB_LEASE', 'SLIPWAY_SHUTDOWN_GRACE']) {
      expect(() => loadConfig({ ...base, [name]: 'soon' }), name).toThrow(
        `${name} must be a duration such as 15m, 90s or 2h, got "soon"`,
      );
      expect(() => loadConfig({ ...base, [name]: '0s' }), name).toThrow(`${name} must be a duration`);
    }
  });
});

describe('configuration of log limits', () => {
  const base = { SLIPWAY_DATA_DIR: '/tmp/slipway-config-test' };

  it('defaults both to 5 MiB and reads sizes', () => {
    expect(loadConfig(base)).toMatchObject({
      buildLogLimitBytes: 5 * 1024 ** 2,
      runtimeLogLimitBytes: 5 * 1024 ** 2,
    });
    expect(
      loadConfig({ ...base, SLIPWAY_BUILD_LOG_LIMIT: '64KiB', SLIPWAY_RUNTIME_LOG_LIMIT: '1MB' }),
    ).toMatchObject({ buildLogLimitBytes: 65_536, runtimeLogLimitBytes: 1_000_000 });
  });

  it('refuses a size it cannot read, naming the variable', () => {
    for (const name of ['SLIPWAY_BUILD_LOG_LIMIT', 'SLIPWAY_RUNTIME_LOG_LIMIT']) {
      expect(() => loadConfig({ ...base, [name]: 'lots' }), name).toThrow(
        `${name} must be a size such as 5MiB or 500KiB, got "lots"`,
      );
      expect(() => loadConfig({ ...base, [name]: '0' }), name).toThrow(`${name} must be a size`);
    }
  });
});

describe("configuration of the edge's memory", () => {
  const base = { SLIPWAY_DATA_DIR: '/tmp/slipway-config-test' };

  it('defaults to 64 MiB of manifests and 256 MiB of files, and reads sizes', () => {
    expect(loadConfig(base)).toMatchObject({
      edgeManifestCacheBytes: 64 * 1024 ** 2,
      edgeFileCacheBytes: 256 * 1024 ** 2,
    });
    expect(
      loadConfig({ ...base, SLIPWAY_EDGE_MANIFEST_CACHE: '1GiB', SLIPWAY_EDGE_FILE_CACHE: '100MB' }),
    ).toMatchObject({ edgeManifestCacheBytes: 1024 ** 3, edgeFileCacheBytes: 100_000_000 });
  });

  it('refuses a size it cannot read, naming the variable', () => {
    expect(() => loadConfig({ ...base, SLIPWAY_EDGE_MANIFEST_CACHE: 'lots' })).toThrow(
      'SLIPWAY_EDGE_MANIFEST_CACHE must be a size such as 64MiB or 256MiB, got "lots"',
    );
    expect(() => loadConfig({ ...base, SLIPWAY_EDGE_FILE_CACHE: '0' })).toThrow(
      'SLIPWAY_EDGE_FILE_CACHE must be a size',
    );
  });
});

describe('configuration of plan limits', () => {
  const base = { SLIPWAY_DATA_DIR: '/tmp/slipway-config-test' };

  it('has defaults for each plan and reads SLIPWAY_<PLAN>_LIMITS over them', () => {
    const plans = loadConfig(base).plans;
    expect(plans.free).toEqual({
      builds: 1,
      memoryBytes: 2 * 1024 ** 3,
      appMemoryBytes: 512 * 1024 ** 2,
      cpu: 1,
      cpuCap: 0.1,
      storageBytes: 1024 ** 3,
      cacheBytes: 2 * 1024 ** 3,
    });
    expect(plans.enterprise.builds).toBeNull();
    expect([plans.pro.cpuCap, plans.enterprise.cpuCap]).toEqual([null, null]);
    const changed = loadConfig({
      ...base,
      SLIPWAY_FREE_LIMITS: 'builds=3, memory=3GiB,cpu=0.5,cpu-cap=none',
      SLIPWAY_PRO_LIMITS: 'builds=unlimited,storage=20GiB,caches=1GiB,app-memory=768MiB,cpu-cap=12.5%',
      SLIPWAY_ENTERPRISE_LIMITS: 'cpu-cap=100%',
    }).plans;
    expect([changed.free.cpuCap, changed.pro.cpuCap, changed.enterprise.cpuCap]).toEqual([null, 0.125, null]);
    expect(changed.free).toMatchObject({
      builds: 3,
      memoryBytes: 3 * 1024 ** 3,
      cpu: 0.5,
      storageBytes: 1024 ** 3,
    });
    expect(changed.pro).toMatchObject({
      builds: null,
      storageBytes: 20 * 1024 ** 3,
      cacheBytes: 1024 ** 3,
      appMemoryBytes: 768 * 1024 ** 2,
      memoryBytes: 4 * 1024 ** 3,
    });
  });

  it('reads docs/operating.md’s examples as written', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/operating.md'), 'utf8');
    const at = doc.indexOf('Change any of them with');
    const start = doc.indexOf('```sh\n', at) + '```sh\n'.length;
    const lines = doc.slice(start, doc.indexOf('\n```', start)).split('\n');
    expect(lines).toHaveLength(2);
    const env = Object.fromEntries(lines.map((l) => /^(\w+)=(\S+)/.exec(l)!.slice(1, 3)));
    const plans = loadConfig({ ...base, ...env }).plans;
    expect(plans.free).toMatchObject({ builds: 2, memoryBytes: 3 * 1024 ** 3, cpuCap: 0.1 });
    expect(plans.pro.cpuCap).toBe(0.5);
  });

  it('refuses an unknown key or a bad value, naming the variable, the key and what it expects', () => {
    expect(() => loadConfig({ ...base, SLIPWAY_FREE_LIMITS: 'ram=1GiB' })).toThrow(
      'SLIPWAY_FREE_LIMITS: "ram=1GiB" is not one of builds=, memory=, app-memory=, cpu=, cpu-cap=, storage=, caches=',
    );
    for (const bad of ['25', '0%', '101%', 'half'])
      expect(() => loadConfig({ ...base, SLIPWAY_FREE_LIMITS: `cpu-cap=${bad}` })).toThrow(
        `SLIPWAY_FREE_LIMITS: cpu-cap must be a percentage above 0% and at most 100%, or "none", such as cpu-cap=50% or cpu-cap=none, got "${bad}"`,
      );
    expect(() => loadConfig({ ...base, SLIPWAY_PRO_LIMITS: 'builds=0' })).toThrow(
      'SLIPWAY_PRO_LIMITS: builds must be a positive whole number or "unlimited", such as builds=2 or builds=unlimited, got "0"',
    );
    expect(() => loadConfig({ ...base, SLIPWAY_ENTERPRISE_LIMITS: 'memory=lots' })).toThrow(
      'SLIPWAY_ENTERPRISE_LIMITS: memory must be a size, such as memory=4GiB, got "lots"',
    );
    expect(() => loadConfig({ ...base, SLIPWAY_FREE_LIMITS: 'cpu=0' })).toThrow(
      'SLIPWAY_FREE_LIMITS: cpu must be a number above 0 and at most 100',
    );
  });
});

describe('configuration of object storage', () => {
  const base = { SLIPWAY_DATA_DIR: '/tmp/slipway-config-test' };
  const keys = { SLIPWAY_OBJECT_STORAGE_KEY_ID: 'id', SLIPWAY_OBJECT_STORAGE_SECRET: 'secret' };

  it('keeps the artifacts directory by default, and a 10 GiB edge disk cache', () => {
    expect(loadConfig(base).objectStorage).toBeUndefined();
    expect(loadConfig(base).edgeDiskCache).toEqual({
      dir: '/tmp/slipway-config-test/edge-cache',
      maxBytes: 10 * 1024 ** 3,
    });
  });

  it('reads an S3-compatible endpoint by path, and AWS S3 by its region, with either kind of credentials', () => {
    expect(
      loadConfig({
        ...base,
        ...keys,
        SLIPWAY_OBJECT_STORAGE: 's3://builds/slipway/prod?endpoint=http://127.0.0.1:9000',
      }).objectStorage,
    ).toMatchObject({
      bucket: 'builds',
      prefix: 'slipway/prod/',
      bucketUrl: 'http://127.0.0.1:9000/builds/',
      region: 'us-east-1',
      accessKeyId: 'id',
    });
    expect(
      loadConfig({
        ...base,
        SLIPWAY_OBJECT_STORAGE: 's3://builds',
        AWS_ACCESS_KEY_ID: 'AKIA',
        AWS_SECRET_ACCESS_KEY: 's',
        AWS_SESSION_TOKEN: 't',
        AWS_REGION: 'eu-west-1',
      }).objectStorage,
    ).toMatchObject({
      prefix: '',
      bucketUrl: 'https://builds.s3.eu-west-1.amazonaws.com/',
      region: 'eu-west-1',
      sessionToken: 't',
    });
  });

  it('refuses a setting it cannot use, naming it and what is expected', () => {
    const bad: [Record<string, string>, string][] = [
      [
        { SLIPWAY_OBJECT_STORAGE: 'http://bucket', ...keys },
        'SLIPWAY_OBJECT_STORAGE must be an s3:// URL naming the bucket',
      ],
      [{ SLIPWAY_OBJECT_STORAGE: 's3://b' }, 'SLIPWAY_OBJECT_STORAGE needs credentials'],
      [
        { SLIPWAY_OBJECT_STORAGE: 's3://b?endpoint=ftp://x', ...keys },
        "SLIPWAY_OBJECT_STORAGE's endpoint must be an http(s) URL",
      ],
      [{ SLIPWAY_OBJECT_STORAGE: 's3://b?bucket_style=x', ...keys }, 'unknown option "bucket_style"'],
      [{ SLIPWAY_OBJECT_STORAGE: 's3://id:secret@b', ...keys }, 'must not hold credentials'],
      [
        { SLIPWAY_OBJECT_STORAGE: 's3://b/Upper', ...keys },
        "SLIPWAY_OBJECT_STORAGE's prefix must be lowercase",
      ],
      [{ SLIPWAY_EDGE_DISK_CACHE: 'lots' }, 'SLIPWAY_EDGE_DISK_CACHE must be a size such as 10GiB'],
      [
        { SLIPWAY_BUILD_CACHE_LOCAL_MAX: 'lots' },
        'SLIPWAY_BUILD_CACHE_LOCAL_MAX must be a size such as 10GiB',
      ],
    ];
    for (const [env, message] of bad) expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });
});
