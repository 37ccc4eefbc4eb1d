/**
 * What each plan may use of the machine, besides its request rate (rate limits are in
 * http/rate-limit*.ts). One place for every per-plan bound, so the sandbox, the build queue and the
 * quotas read the same table. Operators change any of them with SLIPWAY_<PLAN>_LIMITS
 * (docs/operating.md#plan-limits), e.g. `SLIPWAY_FREE_LIMITS=builds=2,memory=3GiB`.
 */
export type PlanName = 'free' | 'pro' | 'enterprise';
/** The plans from the lowest to the highest (a `cpu-cap` holds a plan while a higher one is busy). */
export const PLAN_NAMES: readonly PlanName[] = ['free', 'pro', 'enterprise'];

export interface PlanLimits {
  /** Builds of one organization running at once; null: only the server's own concurrency bounds them. */
  builds: number | null;
  /** Memory of one build sandbox as a whole (every process, shared memory and /tmp pages included). */
  memoryBytes: number;
  /** Memory of one server app's sandbox as a whole. */
  appMemoryBytes: number;
  /** CPU share under contention, relative to other sandboxes (1 = the free plan's share). */
  cpu: number;
  /**
   * The part of the machine's CPUs (0 to 1) all of the plan's sandboxes together may use while a
   * higher plan's sandboxes are busy; null: no cap (sandbox/cpu-pools.ts).
   */
  cpuCap: number | null;
  /** Bytes of uploaded files an organization may keep stored at once. */
  storageBytes: number;
  /** Bytes of build caches an organization may keep at once, across its projects. */
  cacheBytes: number;
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

export const DEFAULT_PLAN_LIMITS: Readonly<Record<PlanName, PlanLimits>> = {
  free: {
    builds: 1,
    memoryBytes: 2 * GiB,
    appMemoryBytes: 512 * MiB,
    cpu: 1,
    cpuCap: 0.1,
    storageBytes: 1 * GiB,
    cacheBytes: 2 * GiB,
  },
  pro: {
    builds: 2,
    memoryBytes: 4 * GiB,
    appMemoryBytes: 1 * GiB,
    cpu: 2,
    cpuCap: null,
    storageBytes: 10 * GiB,
    cacheBytes: 10 * GiB,
  },
  enterprise: {
    builds: null,
    memoryBytes: 8 * GiB,
    appMemoryBytes: 2 * GiB,
    cpu: 4,
    cpuCap: null,
    storageBytes: 100 * GiB,
    cacheBytes: 50 * GiB,
  },
};

type Key = 'builds' | 'memory' | 'app-memory' | 'cpu' | 'cpu-cap' | 'storage' | 'caches';

const KEYS: Record<
  Key,
  { field: keyof PlanLimits; kind: 'count' | 'size' | 'share' | 'percent'; example: string }
> = {
  builds: { field: 'builds', kind: 'count', example: 'builds=2 or builds=unlimited' },
  memory: { field: 'memoryBytes', kind: 'size', example: 'memory=4GiB' },
  'app-memory': { field: 'appMemoryBytes', kind: 'size', example: 'app-memory=1GiB' },
  cpu: { field: 'cpu', kind: 'share', example: 'cpu=2' },
  'cpu-cap': { field: 'cpuCap', kind: 'percent', example: 'cpu-cap=50% or cpu-cap=none' },
  storage: { field: 'storageBytes', kind: 'size', example: 'storage=10GiB' },
  caches: { field: 'cacheBytes', kind: 'size', example: 'caches=5GiB' },
};

/**
 * Reads one SLIPWAY_<PLAN>_LIMITS value (`key=value,key=value`) over the plan's defaults. Returns
 * the limits or a message naming the variable, the key and what is expected.
 */
export function parsePlanLimits(
  variable: string,
  value: string | undefined,
  defaults: PlanLimits,
  parseSize: (v: string) => number | null,
): PlanLimits | string {
  const limits = { ...defaults };
  if (!value?.trim()) return limits;
  for (const part of value.split(',')) {
    if (!part.trim()) continue;
    const m = /^\s*([a-z-]+)\s*=\s*(.+?)\s*$/.exec(part);
    const spec = m ? KEYS[m[1] as Key] : undefined;
    if (!m || !spec) {
      return `${variable}: "${part.trim()}" is not one of ${Object.keys(KEYS)
        .map((k) => `${k}=`)
        .join(', ')} (e.g. ${variable}=builds=2,memory=4GiB)`;
    }
    const raw = m[2]!;
    let parsed: number | null;
    if (spec.kind === 'count') {
      parsed = raw === 'unlimited' ? null : /^\d+$/.test(raw) && Number(raw) >= 1 ? Number(raw) : NaN;
    } else if (spec.kind === 'percent') {
      const pct = /^(\d+(?:\.\d+)?)%$/.exec(raw);
      parsed =
        raw === 'none'
          ? null
          : pct && Number(pct[1]) > 0 && Number(pct[1]) <= 100
            ? Number(pct[1]) / 100
            : NaN;
      // 100% is no cap at all.
      if (parsed === 1) parsed = null;
    } else if (spec.kind === 'share') {
      parsed = /^\d+(\.\d+)?$/.test(raw) && Number(raw) > 0 && Number(raw) <= 100 ? Number(raw) : NaN;
    } else {
      const bytes = parseSize(raw);
      parsed = bytes !== null && bytes > 0 ? bytes : NaN;
    }
    if (Number.isNaN(parsed)) {
      const what =
        spec.kind === 'count'
          ? 'a positive whole number or "unlimited"'
          : spec.kind === 'share'
            ? 'a number above 0 and at most 100'
            : spec.kind === 'percent'
              ? 'a percentage above 0% and at most 100%, or "none"'
              : 'a size';
      return `${variable}: ${m[1]} must be ${what}, such as ${spec.example}, got "${raw}"`;
    }
    (limits as Record<string, number | null>)[spec.field] = parsed;
  }
  return limits;
}
