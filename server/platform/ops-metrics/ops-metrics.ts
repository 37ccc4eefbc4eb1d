import { Counter, Histogram, Registry } from 'prom-client';
import { createEdgeRequests } from './edge-requests.ts';

/** Why the sandbox stopped tenant code: the limit it hit (docs/operating.md#metrics). */
export type SandboxLimit = 'memory' | 'processes' | 'disk' | 'tmp' | 'file_size' | 'time' | 'output';

/** How a build attempt ended. `interrupted`: its worker stopped; `error`: an internal error, retried. */
export type BuildOutcome = 'live' | 'failed' | 'cancelled' | 'timed_out' | 'interrupted' | 'error';

const OUTCOMES: readonly BuildOutcome[] = [
  'live',
  'failed',
  'cancelled',
  'timed_out',
  'interrupted',
  'error',
];

/** Seconds: a build takes seconds to many minutes (SLIPWAY_BUILD_TIMEOUT, 15 min by default). */
const BUILD_BUCKETS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 900, 1800];
/** Seconds: a monitoring run probes every production URL (one batch is SLIPWAY_PROBE_BATCH). */
const RUN_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * What this process records for the operator's Prometheus: one registry per process (never
 * prom-client's global one), made with the process's dependencies, so each test has its own.
 * Backlogs and pool use are read when scraped (backlogs.ts), not counted as they change.
 */
export interface OpsMetrics {
  registry: Registry;
  /** One build attempt ended; `seconds` from its claim. */
  buildEnded(outcome: BuildOutcome, seconds: number): void;
  /** Tenant code was stopped by a limit of its sandbox (`where`: a build or a server app). */
  limitHit(limit: SandboxLimit, where: 'build' | 'app'): void;
  /** One edge response: a few additions into arrays (edge-requests.ts), turned into text when scraped. */
  edgeRequest(status: number, durationMs: number): void;
  /** One monitoring run ended. */
  monitoringRun(seconds: number, ok: boolean): void;
  /**
   * Adds a read done at each scrape, before the text is written (backlogs, apps running): one
   * that fails (the database is down) leaves what it sets empty and counts in
   * `slipway_metrics_read_errors_total{read}`; the scrape still answers with everything else.
   */
  onScrape(read: string, fn: () => Promise<void> | void): void;
  /** Runs the reads, then writes the registry in the text format. */
  scrape(): Promise<string>;
}

export function createOpsMetrics(registry: Registry = new Registry()): OpsMetrics {
  const builds = new Counter({
    name: 'slipway_builds_total',
    help: 'Build attempts that ended, by outcome (live, failed, cancelled, timed_out, interrupted, error).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const buildSeconds = new Histogram({
    name: 'slipway_build_duration_seconds',
    help: 'How long build attempts took from their claim to their end, by outcome.',
    labelNames: ['outcome'],
    buckets: BUILD_BUCKETS,
    registers: [registry],
  });
  const limits = new Counter({
    name: 'slipway_sandbox_limit_hits_total',
    help: 'Tenant code stopped by a sandbox limit (memory, processes, disk, tmp, file_size, time, output), in builds and server apps.',
    labelNames: ['limit', 'where'],
    registers: [registry],
  });
  const edgeRequest = createEdgeRequests(registry);
  const runs = new Histogram({
    name: 'slipway_monitoring_run_duration_seconds',
    help: 'How long monitoring runs (probes, alert rules, pruning) took, by result (ok, failed).',
    labelNames: ['result'],
    buckets: RUN_BUCKETS,
    registers: [registry],
  });
  const readErrors = new Counter({
    name: 'slipway_metrics_read_errors_total',
    help: 'Reads at scrape time that failed (the database was unreachable), by read.',
    labelNames: ['read'],
    registers: [registry],
  });
  const reads = new Map<string, () => Promise<void> | void>();
  // Known labels start at 0, so that rate() and increase() see the first event.
  for (const outcome of OUTCOMES) builds.labels(outcome).inc(0);
  return {
    registry,
    buildEnded(outcome, seconds) {
      builds.labels(outcome).inc();
      buildSeconds.labels(outcome).observe(seconds);
    },
    limitHit(limit, where) {
      limits.labels(limit, where).inc();
    },
    edgeRequest,
    monitoringRun(seconds, ok) {
      runs.labels(ok ? 'ok' : 'failed').observe(seconds);
    },
    onScrape(read, fn) {
      reads.set(read, fn);
    },
    async scrape() {
      await Promise.all(
        [...reads].map(async ([read, fn]) => {
          try {
            await fn();
          } catch {
            readErrors.labels(read).inc();
          }
        }),
      );
      return registry.metrics();
    },
  };
}
