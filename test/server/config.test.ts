import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';

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
