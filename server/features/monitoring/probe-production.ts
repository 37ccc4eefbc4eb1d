import { performance } from 'node:perf_hooks';
import { Agent, request } from 'node:http';
import type { Deps } from '../../platform/deps/deps.ts';
import { evaluateHealthAlerts, type ProbedProject } from './health-alert.ts';
import { PROBE_HEADER } from '../../core/edge-headers.ts';
import { probeTokens } from './probe-token.ts';
import type { ProbeResult } from './probe-result.ts';

/** A probe without an answer within this long fails. */
export const PROBE_TIMEOUT_MS = 10_000;
/** Probes running at once, so that many projects do not flood the edge. */
const PROBE_CONCURRENCY = 8;
export const PROBE_USER_AGENT = 'Slipway-HealthCheck/1';

type ProbeDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'urls' | 'log' | 'cipher'>;

/**
 * Kept-alive connections to the edge, at most one per probe running at once: a run's probes
 * reuse a handful of connections. An idle one is closed after 4 s, before the edge's own 5 s
 * (node's default keep-alive timeout), so a probe is not sent on a connection the edge is closing.
 */
const probeAgent = new Agent({ keepAlive: true, maxSockets: PROBE_CONCURRENCY, timeout: 4000 });

/**
 * `GET /` of a host through the edge, as a visitor would see it. Never throws. `token` (from
 * {@link probeTokens}) keeps the request out of the project's traffic metrics. Only the status
 * and the time until the whole answer arrived are kept: the body is read and dropped, with no
 * `Response` or `Headers` built for it (those cost more than the rest of the client side).
 */
export async function probeHost(
  deps: Pick<Deps, 'config'>,
  host: string,
  signal?: AbortSignal,
  token?: string,
): Promise<ProbeResult> {
  const started = performance.now();
  try {
    const status = await statusOf(deps.config.edgeInternalUrl, host, token, signal);
    const responseTimeMs = Math.round(performance.now() - started);
    const ok = status >= 200 && status < 400;
    return { ok, statusCode: status, responseTimeMs, error: ok ? null : `answered ${status}` };
  } catch (err) {
    return { ok: false, statusCode: null, responseTimeMs: null, error: (err as Error).message };
  }
}

/** `GET /` to `origin` with Host `host`: its status, once the whole answer has arrived. */
function statusOf(origin: string, host: string, token?: string, signal?: AbortSignal): Promise<number> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port || 80,
        path: '/',
        agent: probeAgent,
        headers: { 'user-agent': PROBE_USER_AGENT, host, ...(token ? { [PROBE_HEADER]: token } : {}) },
        timeout: PROBE_TIMEOUT_MS,
        ...(signal ? { signal } : {}),
      },
      (res) => {
        res.on('error', reject);
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.resume();
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
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
  const token = probeTokens(deps);
  let next = 0;
  const worker = async () => {
    while (next < projects.length && !signal?.aborted) {
      const project = projects[next++]!;
      const at = deps.clock.now().toISOString();
      const host = new URL(deps.urls.forHost(project.production_host)).hostname;
      const result = await probe(deps, host, signal, token());
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
