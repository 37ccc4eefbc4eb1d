import type { Store } from '../../../store/db.ts';

export interface Entry {
  userId: string;
  windowStart: number;
  /** The count: the total last read from the database, and what this process added since. */
  count: number;
  /** Counted here, not yet handed to the database. */
  unsaved: number;
  /** Handed to the database, the write not yet done. */
  saving: number;
}
/**
 * What one memory rate-count store keeps (createMemoryRateCounts makes it once), passed to the
 * functions that count and write rather than closed over.
 */
export interface MemoryCountsState {
  store: Pick<Store, 'run'>;
  /** The windows counted here, by `<windowStart>:<userId>`. */
  entries: Map<string, Entry>;
  /** The windows being read from the database, by the same key. */
  loading: Map<string, Promise<Entry>>;
  /** The write under way, if any. */
  flushing: Promise<void> | undefined;
}

export function createMemoryCountsState(store: Pick<Store, 'run'>): MemoryCountsState {
  return { store, entries: new Map(), loading: new Map(), flushing: undefined };
}
