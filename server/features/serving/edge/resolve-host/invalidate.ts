import { current, type ResolverState } from './state.ts';

/** HostResolver.invalidate: forgets the answers a routing change of the project may touch, or all. */
export function invalidate(s: ResolverState, projectId?: string | null): void {
  s.seq += 1;
  if (!projectId) {
    s.allChangedAt = s.seq;
    s.cache.clear();
    return;
  }
  s.anyChangedAt = s.seq;
  if (s.pending.size > 0) s.changedAt.set(projectId, s.seq);
  // Copied first: each delete disposes the entry, which edits these sets.
  const drop = [...(s.byProject.get(projectId) ?? []), ...s.unknown];
  for (const entry of s.pending) if (current(s, entry)) drop.push(entry.host);
  for (const host of drop) s.cache.delete(host);
}
