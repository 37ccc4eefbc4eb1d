import type { Probe } from './http-probe.ts';

export interface HealthCheckOptions {
  probe: Probe;
  sleep: (ms: number) => Promise<void>;
  /** Tries before the check fails: a deployment that just went live may still be warming up. */
  attempts?: number;
  /** Pause between tries. */
  intervalMs?: number;
  /** Time limit of one try. */
  timeoutMs?: number;
  /** Sent with each try (the preview protection bypass secret). */
  headers?: Record<string, string>;
}

/** The verdict on a URL: healthy, or what the last try saw. */
export interface HealthCheck {
  url: string;
  ok: boolean;
  /** `HTTP 200`, `HTTP 503` or the network error. */
  detail: string;
}

/** `<deployment URL><path>`, keeping any path the URL already has. */
export const healthUrl = (deploymentUrl: string, path: string) =>
  `${deploymentUrl.replace(/\/+$/, '')}${path}`;

/** Healthy means any 2xx or 3xx answer of the app: a protected host's sign-in redirect is not one. */
const healthy = (r: { status: number; protected?: boolean }) =>
  r.status >= 200 && r.status < 400 && !r.protected;

const PROTECTED =
  "the deployment is protected and the edge asked to sign in: set the action's protection-bypass input to the project's bypass secret (docs/protection.md)";

/**
 * Probes a URL until it answers healthily or `attempts` tries (default 3, 1 second apart, 10
 * seconds each) have failed.
 */
export async function checkHealth(url: string, opts: HealthCheckOptions): Promise<HealthCheck> {
  const attempts = opts.attempts ?? 3;
  let detail = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const result = await opts.probe(url, opts.timeoutMs ?? 10_000, opts.headers);
    detail = 'status' in result ? `HTTP ${result.status}` : result.error;
    if ('status' in result && result.protected) detail = `${detail}: ${PROTECTED}`;
    if ('status' in result && healthy(result)) return { url, ok: true, detail };
    if (attempt < attempts) await opts.sleep(opts.intervalMs ?? 1_000);
  }
  return { url, ok: false, detail };
}
