/**
 * Latency histograms with fixed buckets. A histogram is an array of counts, one per bucket;
 * bucket `i` holds the latencies `l` with `BUCKET_BOUNDS_MS[i - 1] < l <= BUCKET_BOUNDS_MS[i]`,
 * and the last bucket everything above the last bound. Fixed buckets let per-minute rows be
 * merged by adding counts, at the price of percentiles that are correct to within one bucket.
 */

/** Upper bounds of the finite buckets, in milliseconds. */
export const BUCKET_BOUNDS_MS = [
  1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500,
  10000,
] as const;

/** Finite buckets plus the overflow bucket. */
export const BUCKET_COUNT = BUCKET_BOUNDS_MS.length + 1;

/** Latencies above the last bound are reported as that bound: JSON has no infinity. */
export const OVERFLOW_REPORTED_AS_MS = BUCKET_BOUNDS_MS[BUCKET_BOUNDS_MS.length - 1]!;

export type Histogram = number[];

/** The bucket a latency falls in; negative or NaN durations count as the fastest bucket. */
export function bucketIndex(ms: number): number {
  for (let i = 0; i < BUCKET_BOUNDS_MS.length; i++) {
    if (!(ms > BUCKET_BOUNDS_MS[i]!)) return i;
  }
  return BUCKET_BOUNDS_MS.length;
}

export function emptyHistogram(): Histogram {
  return new Array<number>(BUCKET_COUNT).fill(0);
}

/** Adds histograms bucket by bucket. A shorter array (written before buckets were added) counts as zeros. */
export function mergeHistograms(...hists: readonly Histogram[]): Histogram {
  const out = emptyHistogram();
  for (const h of hists) {
    for (let i = 0; i < h.length; i++) {
      const slot = Math.min(i, BUCKET_COUNT - 1);
      out[slot] = out[slot]! + (h[i] ?? 0);
    }
  }
  return out;
}

/** Reads a stored histogram; anything that is not an array of counts reads as empty. */
export function parseHistogram(json: string): Histogram {
  try {
    const value: unknown = JSON.parse(json);
    if (Array.isArray(value) && value.every((n) => typeof n === 'number' && Number.isFinite(n))) {
      return mergeHistograms(value as number[]);
    }
  } catch {
    // A corrupt row must not break the metrics of a whole period.
  }
  return emptyHistogram();
}

/**
 * The `p`th percentile (0-100) as the upper bound of the bucket holding it: the true value is
 * at most that and above the previous bound, so it is correct to within one bucket. 0 for an
 * empty histogram.
 */
export function percentile(hist: Histogram, p: number): number {
  const total = hist.reduce((a, b) => a + b, 0);
  if (total <= 0) return 0;
  // Nearest-rank: the smallest value with at least p% of the observations at or below it.
  const rank = Math.max(1, Math.ceil((Math.min(Math.max(p, 0), 100) / 100) * total));
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    seen += hist[i] ?? 0;
    if (seen >= rank) return BUCKET_BOUNDS_MS[i] ?? OVERFLOW_REPORTED_AS_MS;
  }
  return OVERFLOW_REPORTED_AS_MS;
}

/** Bucket indexes 0 to 24, one stored column each. */
type BucketIndex =
  | 0
  | 1
  | 2
  | 3
  | 4
  | 5
  | 6
  | 7
  | 8
  | 9
  | 10
  | 11
  | 12
  | 13
  | 14
  | 15
  | 16
  | 17
  | 18
  | 19
  | 20
  | 21
  | 22
  | 23
  | 24;

/** The column of the rollup tables that counts bucket `i`. */
export type LatencyColumn = `lat_${BucketIndex}`;

/**
 * One integer column per bucket, so rollups are summed by the database instead of parsed on the
 * request path. Adding a bucket means a migration that adds its column (and back-fills nothing:
 * older rows count zero there, as `mergeHistograms` does for shorter arrays).
 */
export const LATENCY_COLUMNS = Array.from({ length: BUCKET_COUNT }, (_, i) => `lat_${i}`) as LatencyColumn[];
