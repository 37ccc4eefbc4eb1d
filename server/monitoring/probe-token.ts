import type { Deps } from '../services/deps.ts';

/**
 * The header that marks the service's own health probes to the edge, which does not count them
 * as visitors' traffic. Its value is sealed with the service's encryption key, so a visitor
 * cannot forge it to hide requests from a project's metrics; the edge removes it before a
 * request reaches a deployment's server app.
 */
export const PROBE_HEADER = 'x-slipway-probe';

/** How far a probe's stamp may be from the edge's clock (processes on several machines). */
const PROBE_TOKEN_SKEW_MS = 5 * 60_000;
const PREFIX = 'probe:';

/** The value of {@link PROBE_HEADER} for a probe sent now. */
export function probeToken(deps: Pick<Deps, 'cipher' | 'clock'>): string {
  return deps.cipher.encrypt(`${PREFIX}${deps.clock.now().getTime()}`);
}

/** True when `value` is a probe token sealed with this service's key, stamped within 5 minutes. */
export function isProbeToken(deps: Pick<Deps, 'cipher' | 'clock'>, value: string | undefined): boolean {
  if (!value) return false;
  let plain: string;
  try {
    plain = deps.cipher.decrypt(value);
  } catch {
    return false;
  }
  if (!plain.startsWith(PREFIX)) return false;
  const at = Number(plain.slice(PREFIX.length));
  return Number.isFinite(at) && Math.abs(deps.clock.now().getTime() - at) <= PROBE_TOKEN_SKEW_MS;
}
