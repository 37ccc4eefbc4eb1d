import { z } from 'zod';
import { id, Timestamp, wholeNumber } from './common.ts';

/** How far back metrics look: one hour, one day (default), seven or thirty days. */
export const MetricsPeriod = z.enum(['1h', '24h', '7d', '30d']);
export type MetricsPeriod = z.infer<typeof MetricsPeriod>;

/** Names accepted by `?metric=`. */
export const MetricName = z.enum(['requests', 'errors', 'latency', 'bandwidth', 'cpu', 'ram']);
export type MetricName = z.infer<typeof MetricName>;

export const MetricsQuery = z.strictObject({
  /** Window ending now; default `24h`. */
  period: MetricsPeriod.default('24h'),
  /** Only this entry of `metrics`. */
  metric: MetricName.optional(),
});
export type MetricsQuery = z.infer<typeof MetricsQuery>;

export const RequestMetrics = z.object({
  /** Requests the edge answered in the period. */
  total: z.number().int(),
  /** Answered with a status below 400. */
  success: z.number().int(),
  /** Answered with a status of 400 or more. */
  errors: z.number().int(),
});

export const ErrorMetrics = z.object({
  /** Requests answered with a status of 400 or more. */
  total: z.number().int(),
  /** `total` as a percentage of all requests (0 to 100, two decimals); 0 without traffic. */
  rate: z.number(),
  /** Count per status code, e.g. `{ "404": 3, "502": 1 }`. */
  byStatus: z.record(z.string(), z.number().int()),
});

export const LatencyMetrics = z.object({
  /** Mean response time in milliseconds (exact, two decimals). */
  avg: z.number(),
  /** Median in milliseconds, as the upper bound of its histogram bucket. */
  p50: z.number(),
  /** 95th percentile in milliseconds, as the upper bound of its histogram bucket. */
  p95: z.number(),
  /** 99th percentile in milliseconds, as the upper bound of its histogram bucket. */
  p99: z.number(),
});

export const BandwidthMetrics = z.object({
  /** Response bytes sent (exact). */
  total: z.number().int(),
  /** Always `bytes`. */
  unit: z.literal('bytes'),
});

export const CpuMetrics = z.object({
  /** Mean CPU use in percent. */
  avg: z.number(),
  /** Highest sample in percent. */
  max: z.number(),
});

export const RamMetrics = z.object({
  /** Mean resident memory in bytes. */
  avg: z.number(),
  /** Highest sample in bytes. */
  max: z.number(),
  /** Always `bytes`. */
  unit: z.literal('bytes'),
});

export const Metrics = z.object({
  /** The period asked for. */
  period: MetricsPeriod,
  /** One entry per metric; with `?metric=`, only that one. `cpu` and `ram` appear only when samples exist. */
  metrics: z.object({
    /** Request counts. */
    requests: RequestMetrics.optional(),
    /** Error counts and rate. */
    errors: ErrorMetrics.optional(),
    /** Response times in milliseconds. */
    latency: LatencyMetrics.optional(),
    /** Bytes sent. */
    bandwidth: BandwidthMetrics.optional(),
    /** Percent; only for deployments that run a process, once sampled. */
    cpu: CpuMetrics.optional(),
    /** Bytes; only for deployments that run a process, once sampled. */
    ram: RamMetrics.optional(),
  }),
});
export type Metrics = z.infer<typeof Metrics>;

export const MetricSeriesQuery = z.strictObject({
  /** Window ending now; default `24h`. One point a minute (1h), an hour (24h, 7d) or a day (30d). */
  period: MetricsPeriod.default('24h'),
});
export type MetricSeriesQuery = z.infer<typeof MetricSeriesQuery>;

/** One bucket of traffic: a minute, an hour or a day, starting at `at`. */
export const MetricPoint = z.object({
  /** Start of the bucket. */
  at: Timestamp,
  /** Requests the edge answered in the bucket. */
  requests: z.number().int(),
  /** Of them, answered with a status of 400 or more. */
  errors: z.number().int(),
  /** Response bytes sent. */
  bytes: z.number().int(),
  /** Mean response time in milliseconds (two decimals); null without requests. */
  latencyAvg: z.number().nullable(),
  /** 95th percentile in milliseconds, as the upper bound of its histogram bucket; null without requests. */
  latencyP95: z.number().nullable(),
});
export type MetricPoint = z.infer<typeof MetricPoint>;

export const MetricSeries = z.object({
  /** The period asked for. */
  period: MetricsPeriod,
  /** The length of each point's bucket: `minute`, `hour` or `day`. */
  span: z.enum(['minute', 'hour', 'day']),
  /** Every bucket of the period, oldest first, a bucket without traffic as zeros; the first and last may be partial. */
  points: z.array(MetricPoint),
});
export type MetricSeries = z.infer<typeof MetricSeries>;

export const HealthStatus = z.enum(['healthy', 'degraded', 'down', 'unknown']);
export type HealthStatus = z.infer<typeof HealthStatus>;

export const Health = z.object({
  /** `healthy`, `degraded`, `down` or `unknown` (no probe in 24 hours). */
  status: HealthStatus,
  /** Percentage of successful probes over 24 hours (two decimals); null without probes. */
  uptime: z.number().nullable(),
  /** When the last probe ran; null without probes. */
  lastCheck: Timestamp.nullable(),
  /** Milliseconds the last probe took; null when it got no answer or without probes. */
  responseTime: z.number().nullable(),
});
export type Health = z.infer<typeof Health>;

export const AlertType = z.enum(['high_error_rate', 'deployment_failed', 'health_check_failed']);
export type AlertType = z.infer<typeof AlertType>;

export const AlertStatus = z.enum(['active', 'resolved']);

export const Alert = z.object({
  /** `alt_` identifier. */
  id: id('alt'),
  /** The project the alert is about. */
  projectId: id('prj'),
  /** `high_error_rate`, `deployment_failed` or `health_check_failed`. */
  type: AlertType,
  /** `active` until the condition clears, then `resolved`. */
  status: AlertStatus,
  /** What happened, for people. */
  message: z.string(),
  /** When the alert opened. */
  createdAt: Timestamp,
  /** When the condition cleared; null while active. */
  resolvedAt: Timestamp.nullable(),
});
export type Alert = z.infer<typeof Alert>;

export const AlertsQuery = z.strictObject({
  /** Only alerts in this state. */
  status: AlertStatus.optional(),
  /** Items per page, 1 to 100 (default 10). */
  limit: wholeNumber('limit', 1, 100, 10),
  /** 1-based page number. */
  page: wholeNumber('page', 1, 1_000_000, 1),
});
export type AlertsQuery = z.infer<typeof AlertsQuery>;
