import { DEPLOYMENT_HEADER } from '../../core/edge-headers.ts';
import { requestWithHost } from '../../core/http-get.ts';
import { PROBE_HEADER } from '../../core/edge-headers.ts';

export interface ProbeOptions {
  /** Base URL the edge answers on from this process, e.g. `http://127.0.0.1:3001`. */
  edgeUrl: string;
  /** Full host name of the deployment (`web-1a2b3c4d.localhost`). */
  host: string;
  deploymentId: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** The `X-Slipway-Probe` token for each request (probe-token.ts): the edge does not count it as traffic. */
  probeToken?: () => string;
}

/**
 * The health request that makes a deployment live: the edge must answer for the deployment's
 * host with that deployment (a server app gets started by this very request). Retried until
 * `timeoutMs`; throws with what was last seen.
 */
export async function probeDeployment(opts: ProbeOptions): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  let last = 'no answer yet';
  let delay = 50;
  while (Date.now() - started < opts.timeoutMs) {
    opts.signal?.throwIfAborted();
    try {
      const res = await requestWithHost({
        origin: opts.edgeUrl,
        host: opts.host,
        headers: {
          'user-agent': 'Slipway-HealthCheck/1',
          ...(opts.probeToken ? { [PROBE_HEADER]: opts.probeToken() } : {}),
        },
        timeoutMs: Math.min(10_000, Math.max(1000, opts.timeoutMs - (Date.now() - started))),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      await res.arrayBuffer();
      const served = res.headers.get(DEPLOYMENT_HEADER);
      if (served === opts.deploymentId && res.status < 500)
        return { status: res.status, ms: Date.now() - started };
      last =
        served === opts.deploymentId
          ? `the app answered ${res.status}`
          : `the edge answered ${res.status} without serving it yet`;
    } catch (err) {
      last = `the edge at ${opts.edgeUrl} did not answer (${(err as Error).message})`;
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(1000, delay * 2);
  }
  throw new Error(
    `The deployment did not become healthy within ${Math.round(opts.timeoutMs / 1000)} s: ${last}`,
  );
}
