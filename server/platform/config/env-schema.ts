import { accessSync, constants } from 'node:fs';
import { z } from 'zod';
import {
  DEFAULT_PLAN_LIMITS,
  parsePlanLimits,
  type PlanLimits,
  type PlanName,
} from '../../core/plan-limits.ts';

const port = (name: string, dflt: number) =>
  z
    .string()
    .default(String(dflt))
    .transform((v, ctx) => {
      const n = Number(v);
      if (!/^\d+$/.test(v.trim()) || n > 65535) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be a whole number from 0 to 65535, got "${v}"`,
        });
        return z.NEVER;
      }
      return n;
    });

const positiveInt = (name: string, dflt: number) =>
  z
    .string()
    .default(String(dflt))
    .transform((v, ctx) => {
      if (!/^\d+$/.test(v.trim()) || Number(v) < 1) {
        ctx.addIssue({ code: 'custom', message: `${name} must be a positive whole number, got "${v}"` });
        return z.NEVER;
      }
      return Number(v);
    });

function isReadable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** `15m`, `90s`, `2h`, `7d` or plain milliseconds. */
export function parseDuration(v: string): number | null {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(v.trim());
  if (!m) return null;
  const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const unit = units[(m[2] ?? 'ms') as keyof typeof units];
  return Math.round(Number(m[1]) * unit);
}

/** `500MiB`, `2GiB`, `10MB` or plain bytes. */
export function parseSize(v: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib)?$/i.exec(v.trim());
  if (!m) return null;
  const units: Record<string, number> = {
    b: 1,
    kb: 1e3,
    kib: 1024,
    mb: 1e6,
    mib: 1024 ** 2,
    gb: 1e9,
    gib: 1024 ** 3,
  };
  return Math.round(Number(m[1]) * units[(m[2] ?? 'b').toLowerCase()]!);
}

const duration = (name: string, dflt: string) =>
  z
    .string()
    .default(dflt)
    .transform((v, ctx) => {
      const ms = parseDuration(v);
      if (ms === null || ms <= 0) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be a duration such as 15m, 90s or 2h, got "${v}"`,
        });
        return z.NEVER;
      }
      return ms;
    });

/** A duration setting that must be at least `min` (say why in `reason`). */
const atLeast = (schema: ReturnType<typeof duration>, name: string, min: string, reason: string) =>
  schema.refine((ms) => ms >= parseDuration(min)!, `${name} must be at least ${min}: ${reason}`);

const size = (name: string, dflt: string, example = '512MiB or 4GiB') =>
  z
    .string()
    .default(dflt)
    .transform((v, ctx) => {
      const bytes = parseSize(v);
      if (bytes === null || bytes <= 0) {
        ctx.addIssue({ code: 'custom', message: `${name} must be a size such as ${example}, got "${v}"` });
        return z.NEVER;
      }
      return bytes;
    });

/** `uid:gid` as whole numbers. */
const userIds = (name: string, dflt: string) =>
  z
    .string()
    .default(dflt)
    .transform((v, ctx) => {
      const m = /^(\d+):(\d+)$/.exec(v.trim());
      if (!m || Number(m[1]) === 0 || Number(m[2]) === 0) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be uid:gid of an unprivileged user (not 0), such as 65534:65534, got "${v}"`,
        });
        return z.NEVER;
      }
      return { uid: Number(m[1]), gid: Number(m[2]) };
    });

/** A comma-separated setting's entries, trimmed, empty ones left out. */
export const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const bool = (name: string) =>
  z
    .string()
    .default('false')
    .transform((v, ctx) => {
      if (['true', '1', 'yes'].includes(v.toLowerCase())) return true;
      if (['false', '0', 'no', ''].includes(v.toLowerCase())) return false;
      ctx.addIssue({ code: 'custom', message: `${name} must be true or false, got "${v}"` });
      return z.NEVER;
    });

/** SLIPWAY_<PLAN>_LIMITS: `key=value` pairs over the plan's defaults (core/plan-limits.ts). */
const planLimits = (name: string, plan: PlanName) =>
  z
    .string()
    .optional()
    .transform((v, ctx): PlanLimits => {
      const limits = parsePlanLimits(name, v, DEFAULT_PLAN_LIMITS[plan], parseSize);
      if (typeof limits === 'string') {
        ctx.addIssue({ code: 'custom', message: limits });
        return z.NEVER;
      }
      return limits;
    });

/** The environment variables the service reads, parsed and checked (loadConfig). */
export const EnvSchema = z.object({
  PORT: port('PORT', 3000),
  HOST: z.string().default('0.0.0.0'),
  SLIPWAY_DATA_DIR: z.string().default('./.slipway'),
  DATABASE_URL: z
    .string()
    .optional()
    .refine(
      (v) => !v || /^postgres(ql)?:\/\//.test(v),
      'DATABASE_URL must start with postgres:// (or be unset for SQLite)',
    ),
  SLIPWAY_DB_POOL_SIZE: positiveInt('SLIPWAY_DB_POOL_SIZE', 10),
  SLIPWAY_ARTIFACTS_DIR: z.string().optional(),
  SLIPWAY_OBJECT_STORAGE: z.string().optional(),
  SLIPWAY_OBJECT_STORAGE_KEY_ID: z.string().optional(),
  SLIPWAY_OBJECT_STORAGE_SECRET: z.string().optional(),
  AWS_ACCESS_KEY_ID: z.string().optional(),
  AWS_SECRET_ACCESS_KEY: z.string().optional(),
  AWS_SESSION_TOKEN: z.string().optional(),
  AWS_REGION: z.string().optional(),
  AWS_DEFAULT_REGION: z.string().optional(),
  SLIPWAY_EDGE_DISK_CACHE: size('SLIPWAY_EDGE_DISK_CACHE', '10GiB', '10GiB or 500GiB'),
  SLIPWAY_EDGE_PORT: port('SLIPWAY_EDGE_PORT', 3001),
  SLIPWAY_DOMAIN: z
    .string()
    .default('localhost')
    .refine((v) => /^[a-z0-9.-]+$/.test(v), 'SLIPWAY_DOMAIN must be a lowercase host name'),
  SLIPWAY_PUBLIC_EDGE_URL: z
    .string()
    .optional()
    .refine((v) => !v || /^https?:\/\//.test(v), 'SLIPWAY_PUBLIC_EDGE_URL must be an http(s) URL'),
  SLIPWAY_EDGE_INTERNAL_URL: z
    .string()
    .optional()
    .refine((v) => !v || /^https?:\/\//.test(v), 'SLIPWAY_EDGE_INTERNAL_URL must be an http(s) URL'),
  SLIPWAY_PUBLIC_API_URL: z
    .string()
    .optional()
    .refine((v) => !v || /^https?:\/\//.test(v), 'SLIPWAY_PUBLIC_API_URL must be an http(s) URL'),
  SLIPWAY_ENCRYPTION_KEY: z.string().optional(),
  SLIPWAY_PAYMENT_SECRET: z.string().optional(),
  SLIPWAY_ENTERPRISE_RATE_LIMIT: positiveInt('SLIPWAY_ENTERPRISE_RATE_LIMIT', 10_000),
  SLIPWAY_DEPLOY_HOOK_RATE_LIMIT: positiveInt('SLIPWAY_DEPLOY_HOOK_RATE_LIMIT', 60),
  SLIPWAY_PLAN_CHANGES: z
    .enum(['members', 'operator'], {
      error: (i) =>
        `SLIPWAY_PLAN_CHANGES must be "members" (the default: admins choose their organization's plan) or "operator" (only \`slipway org plan\` sets it), got "${String(i.input)}"`,
    })
    .default('members'),
  SLIPWAY_DEFAULT_PLAN: z
    .enum(['free', 'pro', 'enterprise'], {
      error: (i) =>
        `SLIPWAY_DEFAULT_PLAN must be "free" (the default, 100 requests an hour), "pro" (1000) or "enterprise" (SLIPWAY_ENTERPRISE_RATE_LIMIT), got "${String(i.input)}"`,
    })
    .default('free'),
  SLIPWAY_DEFAULT_PROTECTION: z
    .enum(['none', 'previews', 'all'], {
      error: (i) =>
        `SLIPWAY_DEFAULT_PROTECTION must be "previews" (the default: previews need a member's sign-in), "all" or "none", got "${String(i.input)}"`,
    })
    .default('previews'),
  SLIPWAY_BUILD_TIMEOUT: duration('SLIPWAY_BUILD_TIMEOUT', '15m'),
  SLIPWAY_BUILD_CONCURRENCY: positiveInt('SLIPWAY_BUILD_CONCURRENCY', 2),
  SLIPWAY_FREE_LIMITS: planLimits('SLIPWAY_FREE_LIMITS', 'free'),
  SLIPWAY_PRO_LIMITS: planLimits('SLIPWAY_PRO_LIMITS', 'pro'),
  SLIPWAY_ENTERPRISE_LIMITS: planLimits('SLIPWAY_ENTERPRISE_LIMITS', 'enterprise'),
  SLIPWAY_MAX_OUTPUT_SIZE: size('SLIPWAY_MAX_OUTPUT_SIZE', '500MiB', '500MiB or 2GiB'),
  SLIPWAY_MAX_OUTPUT_FILES: positiveInt('SLIPWAY_MAX_OUTPUT_FILES', 100_000),
  SLIPWAY_MAX_UPLOAD_SIZE: size('SLIPWAY_MAX_UPLOAD_SIZE', '500MiB', '500MiB or 2GiB'),
  SLIPWAY_MAX_UPLOAD_FILES: positiveInt('SLIPWAY_MAX_UPLOAD_FILES', 100_000),
  SLIPWAY_UPLOAD_TTL: duration('SLIPWAY_UPLOAD_TTL', '24h'),
  SLIPWAY_BUILD_CACHE_SIZE: size('SLIPWAY_BUILD_CACHE_SIZE', '1GiB', '1GiB or 500MiB'),
  SLIPWAY_BUILD_CACHE_TTL: duration('SLIPWAY_BUILD_CACHE_TTL', '7d'),
  SLIPWAY_BUILD_CACHE_LOCAL_MAX: size('SLIPWAY_BUILD_CACHE_LOCAL_MAX', '10GiB', '10GiB or 500GiB'),
  SLIPWAY_ARTIFACT_RETENTION: duration('SLIPWAY_ARTIFACT_RETENTION', '30d'),
  SLIPWAY_JOB_LEASE: duration('SLIPWAY_JOB_LEASE', '60s'),
  SLIPWAY_SHUTDOWN_GRACE: duration('SLIPWAY_SHUTDOWN_GRACE', '10s'),
  SLIPWAY_EDGE_ROUTE_TTL: duration('SLIPWAY_EDGE_ROUTE_TTL', '60s'),
  SLIPWAY_EDGE_MANIFEST_CACHE: size('SLIPWAY_EDGE_MANIFEST_CACHE', '64MiB', '64MiB or 256MiB'),
  SLIPWAY_EDGE_FILE_CACHE: size('SLIPWAY_EDGE_FILE_CACHE', '256MiB', '256MiB or 1GiB'),
  SLIPWAY_APP_CACHE_SIZE: size('SLIPWAY_APP_CACHE_SIZE', '1GiB', '1GiB or 256MiB'),
  SLIPWAY_TOKEN_CACHE_TTL: z
    .string()
    .default('1s')
    .transform((v, ctx) => {
      const ms = parseDuration(v);
      if (ms === null) {
        ctx.addIssue({
          code: 'custom',
          message: `SLIPWAY_TOKEN_CACHE_TTL must be a duration such as 1s or 500ms, or 0 to look every token up, got "${v}"`,
        });
        return z.NEVER;
      }
      return ms;
    }),
  SLIPWAY_DNS_SERVERS: z.string().optional(),
  SLIPWAY_WEBHOOK_ALLOW_PRIVATE: bool('SLIPWAY_WEBHOOK_ALLOW_PRIVATE'),
  SLIPWAY_EDGE_TLS_PORT: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || (/^\d+$/.test(v.trim()) && Number(v) <= 65535),
      'SLIPWAY_EDGE_TLS_PORT must be a whole number from 0 to 65535 (or unset for no TLS listener)',
    ),
  SLIPWAY_ACME_DIRECTORY: z
    .string()
    .optional()
    .refine(
      (v) => !v || /^https?:\/\//.test(v),
      'SLIPWAY_ACME_DIRECTORY must be the http(s) URL of an ACME directory, such as https://acme-v02.api.letsencrypt.org/directory',
    ),
  SLIPWAY_ACME_EMAIL: z
    .string()
    .optional()
    .refine((v) => !v || /^[^@\s]+@[^@\s]+$/.test(v), 'SLIPWAY_ACME_EMAIL must be an e-mail address'),
  SLIPWAY_ACME_CA_FILE: z
    .string()
    .optional()
    .refine(
      (v) => !v || isReadable(v),
      "SLIPWAY_ACME_CA_FILE must be a readable PEM file of the CA that signed the ACME server's HTTPS certificate",
    ),
  SLIPWAY_HEALTH_INTERVAL: duration('SLIPWAY_HEALTH_INTERVAL', '60s'),
  SLIPWAY_DOMAIN_CLAIM_TTL: duration('SLIPWAY_DOMAIN_CLAIM_TTL', '7d'),
  SLIPWAY_JOB_RETENTION: duration('SLIPWAY_JOB_RETENTION', '7d'),
  SLIPWAY_IDEMPOTENCY_TTL: duration('SLIPWAY_IDEMPOTENCY_TTL', '24h'),
  SLIPWAY_IDEMPOTENCY_WAIT: duration('SLIPWAY_IDEMPOTENCY_WAIT', '5s'),
  SLIPWAY_METRICS_MINUTE_RETENTION: atLeast(
    duration('SLIPWAY_METRICS_MINUTE_RETENTION', '48h'),
    'SLIPWAY_METRICS_MINUTE_RETENTION',
    '2h',
    'the current hour is read from minutes',
  ),
  SLIPWAY_METRICS_HOUR_RETENTION: atLeast(
    duration('SLIPWAY_METRICS_HOUR_RETENTION', '35d'),
    'SLIPWAY_METRICS_HOUR_RETENTION',
    '31d',
    'a 30-day period reads the hours at both of its ends',
  ),
  SLIPWAY_METRICS_DAY_RETENTION: atLeast(
    duration('SLIPWAY_METRICS_DAY_RETENTION', '90d'),
    'SLIPWAY_METRICS_DAY_RETENTION',
    '31d',
    'the 30-day period reads days',
  ),
  // 750: a probe costs 0.6 to 1.3 ms of CPU (client, edge, driver; docs/performance.md), so a run
  // of 750 costs about what 500 did before probes got cheaper.
  SLIPWAY_PROBE_BATCH: positiveInt('SLIPWAY_PROBE_BATCH', 750),
  SLIPWAY_SESSION_TTL: duration('SLIPWAY_SESSION_TTL', '7d'),
  SLIPWAY_OIDC_ISSUER: z
    .string()
    .default('https://token.actions.githubusercontent.com')
    .refine(
      (v) => /^https?:\/\/\S+$/.test(v),
      'SLIPWAY_OIDC_ISSUER must be the http(s) URL of the OIDC issuer',
    )
    .transform((v) => v.replace(/\/+$/, '')),
  SLIPWAY_OIDC_AUDIENCE: z.string().min(1).optional(),
  SLIPWAY_OIDC_TOKEN_TTL: duration('SLIPWAY_OIDC_TOKEN_TTL', '15m'),
  SLIPWAY_OIDC_KEYS_COOLDOWN: duration('SLIPWAY_OIDC_KEYS_COOLDOWN', '30s'),
  SLIPWAY_RUNTIME_SAMPLE_INTERVAL: duration('SLIPWAY_RUNTIME_SAMPLE_INTERVAL', '10s'),
  SLIPWAY_METRICS_PORT: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || (/^\d+$/.test(v.trim()) && Number(v) <= 65535),
      'SLIPWAY_METRICS_PORT must be a whole number from 0 to 65535 (or unset for no metrics listener)',
    ),
  SLIPWAY_METRICS_HOST: z.string().default('127.0.0.1'),
  SLIPWAY_METRICS_TOKEN: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || /^[\x21-\x7e]{16,}$/.test(v),
      'SLIPWAY_METRICS_TOKEN must be at least 16 printable characters without spaces, such as the output of `openssl rand -hex 24`',
    ),
  SLIPWAY_SANDBOX: z
    .enum(['bubblewrap', 'off'], {
      error: (i) =>
        `SLIPWAY_SANDBOX must be "bubblewrap" (the default) or "off" (a single trusted user: no isolation), got "${String(i.input)}"`,
    })
    .default('bubblewrap'),
  SLIPWAY_SANDBOX_USER: userIds('SLIPWAY_SANDBOX_USER', '65534:65534'),
  SLIPWAY_SANDBOX_ALLOW: z.string().optional(),
  SLIPWAY_SANDBOX_HOST_PORTS: z
    .string()
    .optional()
    .refine(
      (v) => list(v).every((p) => /^\d{1,5}$/.test(p) && Number(p) >= 1 && Number(p) <= 65535),
      'SLIPWAY_SANDBOX_HOST_PORTS must be a comma-separated list of TCP ports (1 to 65535), e.g. 4873,3001',
    ),
  SLIPWAY_SANDBOX_READ_ONLY: z
    .string()
    .optional()
    .refine(
      (v) => list(v).every((p) => p.startsWith('/')),
      'SLIPWAY_SANDBOX_READ_ONLY must be a comma-separated list of absolute paths',
    ),
  SLIPWAY_SANDBOX_PROCESSES: positiveInt('SLIPWAY_SANDBOX_PROCESSES', 512),
  SLIPWAY_SANDBOX_MEMORY: size('SLIPWAY_SANDBOX_MEMORY', '4GiB'),
  SLIPWAY_SANDBOX_DISK: size('SLIPWAY_SANDBOX_DISK', '5GiB'),
  SLIPWAY_SANDBOX_DISK_MODE: z
    .enum(['auto', 'watch'], {
      error: (i) =>
        `SLIPWAY_SANDBOX_DISK_MODE must be "auto" (the default: a file system of its own per workspace where the service can mount one) or "watch" (measure the workspace every second), got "${String(i.input)}"`,
    })
    .default('auto'),
  SLIPWAY_SANDBOX_TMP_SIZE: size('SLIPWAY_SANDBOX_TMP_SIZE', '512MiB'),
  SLIPWAY_BUILD_LOG_LIMIT: size('SLIPWAY_BUILD_LOG_LIMIT', '5MiB', '5MiB or 500KiB'),
  SLIPWAY_RUNTIME_LOG_LIMIT: size('SLIPWAY_RUNTIME_LOG_LIMIT', '5MiB', '5MiB or 500KiB'),
  SLIPWAY_LOCAL_REPOSITORIES: z
    .string()
    .default('any')
    .refine(
      (v) => v === 'any' || v === 'off' || list(v).every((p) => p.startsWith('/')),
      'SLIPWAY_LOCAL_REPOSITORIES must be "any", "off", or a comma-separated list of absolute directories',
    ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SLIPWAY_LOG_FORMAT: z
    .enum(['json', 'pretty'], {
      error: (i) =>
        `SLIPWAY_LOG_FORMAT must be "json" or "pretty" (unset: pretty on a terminal, JSON otherwise), got "${String(i.input)}"`,
    })
    .optional(),
  // The GitHub App (the bot's own variables): workers clone private repositories with it.
  APP_ID: z.string().regex(/^\d+$/, 'APP_ID must be the numeric id of the GitHub App').optional(),
  PRIVATE_KEY: z.string().optional(),
  PRIVATE_KEY_PATH: z
    .string()
    .optional()
    .refine(
      (v) => !v || isReadable(v),
      'PRIVATE_KEY_PATH must be a readable .pem file (the GitHub App private key)',
    ),
  // Sign in with GitHub on the dashboard: the GitHub App's OAuth client (docs/dashboard.md).
  GITHUB_CLIENT_ID: z.string().optional(),
  GITHUB_CLIENT_SECRET: z.string().optional(),
  SLIPWAY_GITHUB_SIGN_UP: z
    .string()
    .optional()
    .refine(
      (v) => list(v).every((x) => /^org:[A-Za-z0-9-]+$/.test(x) || /^[a-z0-9.-]+\.[a-z]{2,}$/i.test(x)),
      'SLIPWAY_GITHUB_SIGN_UP must be a comma-separated list of e-mail domains (example.com) and GitHub organizations (org:acme)',
    ),
  GITHUB_API_URL: z
    .string()
    .optional()
    .refine(
      (v) => !v || /^https?:\/\/\S+$/.test(v),
      'GITHUB_API_URL must be the http(s) URL of the GitHub REST API, such as https://ghe.example.com/api/v3',
    ),
});

/** The environment, parsed. */
export type Env = z.infer<typeof EnvSchema>;
