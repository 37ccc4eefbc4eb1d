import { readProjectWithRole } from '../../project-with-role.ts';
import type { Counted } from '../rate-counts.ts';
import { readRateCount } from './queries.ts';
import type { Entry, MemoryCountsState } from './state.ts';

async function load(st: MemoryCountsState, key: string, userId: string, windowStart: number): Promise<Entry> {
  const [row] = await st.store.run(readRateCount, userId, windowStart);
  // Another request of the same user may have loaded it meanwhile.
  let entry = st.entries.get(key);
  if (!entry) {
    entry = { userId, windowStart, count: Number(row?.count ?? 0), unsaved: 0, saving: 0 };
    st.entries.set(key, entry);
  }
  return entry;
}

/** The window's entry: the one in memory, or read once however many requests ask together. */
async function entryOf(st: MemoryCountsState, userId: string, windowStart: number): Promise<Entry> {
  const key = `${windowStart}:${userId}`;
  const entry = st.entries.get(key);
  if (entry) return entry;
  let pending = st.loading.get(key);
  if (!pending) {
    pending = load(st, key, userId, windowStart).finally(() => st.loading.delete(key));
    st.loading.set(key, pending);
  }
  return pending;
}

async function count(st: MemoryCountsState, userId: string, windowStart: number, limit: number) {
  const entry = await entryOf(st, userId, windowStart);
  if (entry.count >= limit) return null;
  entry.count++;
  entry.unsaved++;
  return entry.count;
}

/** RateCounts.take. */
export async function take(
  st: MemoryCountsState,
  userId: string,
  windowStart: number,
  limit: number,
  projectId: string | undefined,
): Promise<Counted> {
  const [counted, project] = await Promise.all([
    count(st, userId, windowStart, limit),
    projectId === undefined ? undefined : readProjectWithRole({ store: st.store }, userId, projectId),
  ]);
  return project === undefined ? { count: counted } : { count: counted, project };
}

/** RateCounts.peek. */
export async function peek(st: MemoryCountsState, userId: string, windowStart: number): Promise<number> {
  return (await entryOf(st, userId, windowStart)).count;
}
