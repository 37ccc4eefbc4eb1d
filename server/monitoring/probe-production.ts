import { performance } from 'node:perf_hooks';
import { requestWithHost } from '../lib/http-get.ts';
import type { Deps } from '../services/deps.ts';
import { evaluateHealthAlerts, type ProbedProject } from './health-alert.ts';
import { PROBE_HEADER, probeToken } from './probe-token.ts';

/** A probe without an answer within this long fails. */
export const PROBE_TIMEOUT_MS = 10_000;
/** Probes running at once, so that many projects do not flood the edge. */
const PROBE_CONCURRENCY = 8;
export const PROBE_USER_AGENT = 'Slipway-HealthCheck/1';

export interface ProbeResult {
  /** A 2xx or 3xx answer. */
  ok: boolean;
  statusCode: number | null;
  /** Until the whole answer arrived; null without an answer. */
  responseTimeMs: number | null;
  /** Why it failed; null when ok. */
  error: string | null;
}

type ProbeDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'urls' | 'log' | 'cipher'>;

/**
 * `GET /` of a host through the edge, as a visitor would see it. Never throws. `token` (from
 * {@link probeToken}) keeps the request out of the project's traffic metrics.
 */
export async function probeHost(
  deps: Pick<Deps, 'config'>,
  host: string,
  signal?: AbortSignal,
  token?: string,
): Promise<ProbeResult> {
  const started = performance.now();
  try {
    const res = await requestWithHost({
      origin: deps.config.edgeInternalUrl,
      host,
      headers: { 'user-agent': PROBE_USER_AGENT, ...(token ? { [PROBE_HEADER]: token } : {}) },
      timeoutMs: PROBE_TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
    await res.arrayBuffer();
    const responseTimeMs = Math.round(performance.now() - started);
    const ok = res.status >= 200 && res.status < 400;
    return { ok, statusCode: res.status, responseTimeMs, error: ok ? null : `answered ${res.status}` };
  } catch (err) {
    return { ok: false, statusCode: null, responseTimeMs: null, error: (err as Error).message };
  }
}

/** Health rows per INSERT: a few statements per run, well under both databases' parameter limits. */
const INSERT_BATCH = 500;

/**
 * Which slice of the projects a run probes: with more projects than the batch
 * (SLIPWAY_PROBE_BATCH), the run of interval `n` probes every `slices`-th project in id order
 * starting at `n mod slices`, so a run probes at most the batch and each project is probed once
 * every `slices` intervals.
 */
export function probeSlice(projectCount: number, batch: number, now: Date, intervalMs: number) {
  const slices = Math.max(1, Math.ceil(projectCount / batch));
  return { slices, slice: Math.floor(now.getTime() / intervalMs) % slices };
}

/**
 * Probes the production URL of the active projects that have a live production deployment (at
 * most SLIPWAY_PROBE_BATCH per run, see {@link probeSlice}), stores their health_checks rows in
 * a few multi-row inserts, and opens or resolves `health_check_failed`. Probes carry the
 * {@link PROBE_HEADER} token, so the edge does not count them as traffic. Suspended projects (the
 * edge answers 503 on purpose) and projects with nothing in production are not probed: their
 * health reads `unknown` once older probes age out. Returns how many projects were probed.
 */
export async function probeProductionUrls(
  deps: ProbeDeps,
  signal?: AbortSignal,
  probe: typeof probeHost = probeHost,
): Promise<number> {
  const all = await deps.db
    .selectFrom('projects')
    .select(['id', 'production_host'])
    .where('status', '=', 'active')
    .where('deleted_at', 'is', null)
    .where('production_deployment_id', 'is not', null)
    .orderBy('id')
    .execute();
  const { slices, slice } = probeSlice(
    all.length,
    deps.config.probeBatch,
    deps.clock.now(),
    deps.config.healthIntervalMs,
  );
  const projects = slices === 1 ? all : all.filter((_, i) => i % slices === slice);
  const results: ProbedProject[] = [];
  let next = 0;
  const worker = async () => {
    while (next < projects.length && !signal?.aborted) {
      const project = projects[next++]!;
      const at = deps.clock.now().toISOString();
      const host = new URL(deps.urls.forHost(project.production_host)).hostname;
      const result = await probe(deps, host, signal, probeToken(deps));
      results.push({ projectId: project.id, at, result });
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROBE_CONCURRENCY, projects.length) }, worker));
  for (let i = 0; i < results.length; i += INSERT_BATCH) {
    await deps.db
      .insertInto('health_checks')
      .values(
        results.slice(i, i + INSERT_BATCH).map(({ projectId, at, result }) => ({
          project_id: projectId,
          at,
          ok: result.ok ? 1 : 0,
          status_code: result.statusCode,
          response_time_ms: result.responseTimeMs,
          error: result.error?.slice(0, 1000) ?? null,
        })),
      )
      .execute();
  }
  await evaluateHealthAlerts(deps, results);
  return results.length;
}
