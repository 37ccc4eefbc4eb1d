import { performance } from 'node:perf_hooks';
import { requestWithHost } from '../lib/http-get.ts';
import type { Deps } from '../services/deps.ts';
import { evaluateHealthAlert } from './health-alert.ts';

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

type ProbeDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'urls' | 'log'>;

/** `GET /` of a host through the edge, as a visitor would see it. Never throws. */
export async function probeHost(
  deps: Pick<Deps, 'config'>,
  host: string,
  signal?: AbortSignal,
): Promise<ProbeResult> {
  const started = performance.now();
  try {
    const res = await requestWithHost({
      origin: deps.config.edgeInternalUrl,
      host,
      headers: { 'user-agent': PROBE_USER_AGENT },
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

/**
 * Probes the production URL of every active project that has a production deployment, stores
 * one health_checks row each, and opens or resolves the project's `health_check_failed` alert.
 * Suspended projects (the edge answers 503 on purpose) and projects with nothing in production
 * are not probed: their health reads `unknown` once older probes age out.
 */
export async function probeProductionUrls(
  deps: ProbeDeps,
  signal?: AbortSignal,
  probe: typeof probeHost = probeHost,
): Promise<number> {
  const projects = await deps.db
    .selectFrom('projects')
    .select(['id', 'production_host'])
    .where('status', '=', 'active')
    .where('deleted_at', 'is', null)
    .where('production_deployment_id', 'is not', null)
    .execute();
  let next = 0;
  const worker = async () => {
    while (next < projects.length && !signal?.aborted) {
      const project = projects[next++]!;
      const at = deps.clock.now().toISOString();
      const host = new URL(deps.urls.forHost(project.production_host)).hostname;
      const result = await probe(deps, host, signal);
      await deps.db
        .insertInto('health_checks')
        .values({
          project_id: project.id,
          at,
          ok: result.ok ? 1 : 0,
          status_code: result.statusCode,
          response_time_ms: result.responseTimeMs,
          error: result.error?.slice(0, 1000) ?? null,
        })
        .execute();
      await evaluateHealthAlert(deps, project.id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROBE_CONCURRENCY, projects.length) }, worker));
  return projects.length;
}
