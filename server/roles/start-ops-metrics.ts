import { readFileSync } from 'node:fs';
import { collectDefaultMetrics, Gauge } from 'prom-client';
import type { Deps } from '../platform/deps/deps.ts';
import { listenError } from '../core/startup-error.ts';
import { registerBacklogs } from './ops-backlogs.ts';
import { startMetricsServer } from '../platform/ops-metrics/metrics-http.ts';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export interface OpsMetricsRole {
  /** Where the metrics listener is, when SLIPWAY_METRICS_PORT is set. */
  url?: string;
  stop(): Promise<void>;
}

/**
 * What a process with metrics on (SLIPWAY_METRICS_PORT or SLIPWAY_METRICS_TOKEN) adds to its
 * registry, and its own listener: Node.js's process metrics (CPU, memory, event-loop lag, as
 * `process_*` and `nodejs_*`), which roles it runs, and the shared backlogs read when scraped.
 */
export async function startOpsMetrics(deps: Deps, roles: readonly string[]): Promise<OpsMetricsRole> {
  const { registry } = deps.ops;
  const { metrics } = deps.config;
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'slipway_info',
    help: 'Always 1: the version and roles of this process, and its database.',
    labelNames: ['version', 'roles', 'database'],
    registers: [registry],
  }).set(
    { version: VERSION, roles: roles.join(','), database: deps.config.databaseUrl ? 'postgres' : 'sqlite' },
    1,
  );
  registerBacklogs(deps.ops, deps);
  if (metrics.port === undefined) return { stop: async () => undefined };
  const port = metrics.port;
  const server = await startMetricsServer({
    ops: deps.ops,
    port,
    host: metrics.host,
    token: metrics.token,
    onError: (err) => deps.log.warn({ err }, 'collecting metrics failed'),
  }).catch((err: unknown) => {
    throw listenError(err, port, 'the metrics listener', 'SLIPWAY_METRICS_PORT');
  });
  const host = metrics.host.includes(':') ? `[${metrics.host}]` : metrics.host;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${server.port}/metrics`,
    stop: () => server.stop(),
  };
}
