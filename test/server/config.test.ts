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
