import { add } from './queries.ts';
import type { Entry, MemoryCountsState } from './state.ts';

/** Writes what was counted, one write at a time: a slow one is followed by the next, not overtaken. */
export async function flush(st: MemoryCountsState): Promise<void> {
  while (st.flushing) await st.flushing;
  st.flushing = writeAll(st).finally(() => (st.flushing = undefined));
  return st.flushing;
}

/** Every entry's new requests, added to the stored counts; the entries with none are forgotten. */
async function writeAll(st: MemoryCountsState): Promise<void> {
  const writes: Promise<void>[] = [];
  for (const [key, entry] of st.entries) {
    if (entry.unsaved === 0) {
      // Nothing new since the last write: forgotten, read again on the next request.
      if (entry.saving === 0) st.entries.delete(key);
      continue;
    }
    writes.push(write(st, entry));
  }
  const failed = (await Promise.allSettled(writes)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** One entry's new requests, added to its stored count, the total read back. */
function write(st: MemoryCountsState, entry: Entry): Promise<void> {
  const n = entry.unsaved;
  entry.unsaved = 0;
  entry.saving += n;
  return st.store.run(add, entry.userId, entry.windowStart, n).then(
    ([row]) => {
      entry.saving -= n;
      // The stored total (this write and every other process's), and what was counted since.
      if (row) entry.count = Number(row.count) + entry.unsaved;
    },
    (err: unknown) => {
      // Kept to be written next time.
      entry.saving -= n;
      entry.unsaved += n;
      throw err;
    },
  );
}
