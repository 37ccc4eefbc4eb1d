import type { Env } from './env-schema.ts';

/** How long things are kept, idempotency, OIDC, probes and metrics. */
export function monitoringSettings(env: Env) {
  return {
    /** Finished jobs (builds, deliveries' runs, certificates) are deleted this long after they ended. */
    jobRetentionMs: env.SLIPWAY_JOB_RETENTION,
    /** How long an Idempotency-Key's answer is replayed; past that the key is as good as new. */
    idempotencyTtlMs: env.SLIPWAY_IDEMPOTENCY_TTL,
    /** How long a request waits for the first one with its key before answering 409. */
    idempotencyWaitMs: env.SLIPWAY_IDEMPOTENCY_WAIT,
    /** How long traffic and runtime rollups are kept per minute, hour and day (the monitoring run deletes older rows). */
    metricsRetention: {
      minuteMs: env.SLIPWAY_METRICS_MINUTE_RETENTION,
      hourMs: env.SLIPWAY_METRICS_HOUR_RETENTION,
      dayMs: env.SLIPWAY_METRICS_DAY_RETENTION,
    },
    probeBatch: env.SLIPWAY_PROBE_BATCH,
    /** How long a dashboard sign-in lasts (it ends sooner when its API token is revoked). */
    sessionTtlMs: env.SLIPWAY_SESSION_TTL,
    /** Keyless deploys from GitHub Actions: whose OIDC tokens are accepted, for which audience, and how long the Slipway token lasts. */
    oidc: {
      issuer: env.SLIPWAY_OIDC_ISSUER,
      audience:
        env.SLIPWAY_OIDC_AUDIENCE ??
        env.SLIPWAY_PUBLIC_API_URL?.replace(/\/+$/, '') ??
        `http://localhost:${env.PORT}`,
      tokenTtlMs: env.SLIPWAY_OIDC_TOKEN_TTL,
      /** Least time between two fetches of the issuer's keys (a token with an unknown kid asks again). */
      keysCooldownMs: env.SLIPWAY_OIDC_KEYS_COOLDOWN,
    },
    /** How often production URLs are probed and alert rules evaluated. */
    healthIntervalMs: env.SLIPWAY_HEALTH_INTERVAL,
    /**
     * Prometheus metrics of this process (server/platform/ops-metrics/): a listener of their own on `port`
     * (at `host`), and `/metrics` on the API when `token` is set; the token is then required on
     * both. Off (nothing recorded on the edge's request path) when neither is set.
     */
    metrics: {
      port: env.SLIPWAY_METRICS_PORT === undefined ? undefined : Number(env.SLIPWAY_METRICS_PORT),
      host: env.SLIPWAY_METRICS_HOST,
      token: env.SLIPWAY_METRICS_TOKEN,
      enabled: env.SLIPWAY_METRICS_PORT !== undefined || env.SLIPWAY_METRICS_TOKEN !== undefined,
    },
    /** How often the edge samples the CPU and memory of server apps. */
    runtimeSampleIntervalMs: env.SLIPWAY_RUNTIME_SAMPLE_INTERVAL,
  };
}
