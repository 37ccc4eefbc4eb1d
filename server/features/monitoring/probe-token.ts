import type { Deps } from '../../platform/deps/deps.ts';

/** How far a probe's stamp may be from the edge's clock (processes on several machines). */
const PROBE_TOKEN_SKEW_MS = 5 * 60_000;
/**
 * How long one token is reused by {@link probeTokens}: well inside the skew, so a run that takes
 * minutes (probes timing out) still sends tokens the edge accepts.
 */
const PROBE_TOKEN_REUSE_MS = 60_000;
const PREFIX = 'probe:';

/** The value of the probe header (PROBE_HEADER, server/core/edge-headers.ts) for a probe sent now. */
export function probeToken(deps: Pick<Deps, 'cipher' | 'clock'>): string {
  return deps.cipher.encrypt(`${PREFIX}${deps.clock.now().getTime()}`);
}

/**
 * Tokens for a run of probes: one sealed token reused for up to a minute, then a fresh one.
 * Sealing costs a cipher set-up and random bytes (about 20 µs), once a run instead of per probe.
 */
export function probeTokens(deps: Pick<Deps, 'cipher' | 'clock'>): () => string {
  let token = '';
  let sealedAt = -Infinity;
  return () => {
    const now = deps.clock.now().getTime();
    if (now - sealedAt >= PROBE_TOKEN_REUSE_MS || now < sealedAt) {
      token = probeToken(deps);
      sealedAt = now;
    }
    return token;
  };
}

/** The time a probe token was stamped with, or null when it is not one sealed with this key. */
function stampOf(deps: Pick<Deps, 'cipher'>, value: string): number | null {
  let plain: string;
  try {
    plain = deps.cipher.decrypt(value);
  } catch {
    return null;
  }
  if (!plain.startsWith(PREFIX)) return null;
  const at = Number(plain.slice(PREFIX.length));
  return Number.isFinite(at) ? at : null;
}

const fresh = (deps: Pick<Deps, 'clock'>, at: number) =>
  Math.abs(deps.clock.now().getTime() - at) <= PROBE_TOKEN_SKEW_MS;

/** True when `value` is a probe token sealed with this service's key, stamped within 5 minutes. */
export function isProbeToken(deps: Pick<Deps, 'cipher' | 'clock'>, value: string | undefined): boolean {
  if (!value) return false;
  const at = stampOf(deps, value);
  return at !== null && fresh(deps, at);
}

/**
 * {@link isProbeToken} for the edge, remembering the last token it unsealed: a run's probes
 * share one token ({@link probeTokens}), so each is checked by a string comparison and its stamp
 * instead of a decryption. Only a token that unsealed is remembered.
 */
export function createProbeCheck(
  deps: Pick<Deps, 'cipher' | 'clock'>,
): (value: string | undefined) => boolean {
  let last = '';
  let lastAt = 0;
  return (value) => {
    if (!value) return false;
    if (value !== last) {
      const at = stampOf(deps, value);
      if (at === null) return false;
      last = value;
      lastAt = at;
    }
    return fresh(deps, lastAt);
  };
}
