import type { Store } from '../../store/db.ts';
import type { RateCounts } from './rate-counts.ts';
import { createBatchedRateCounts } from './rate-counts-batched.ts';
import { createMemoryRateCounts } from './rate-counts-memory.ts';

/** The rate counts that suit the store (the kinds are described in rate-counts.ts). */
export function createRateCounts(
  store: Pick<Store, 'run' | 'dialect'>,
  opts: { onError?: (err: unknown) => void } = {},
): RateCounts {
  return store.dialect.name === 'sqlite'
    ? createMemoryRateCounts(store, opts)
    : createBatchedRateCounts(store);
}
