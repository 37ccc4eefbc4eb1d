/**
 * Events with the same key are processed one at a time, in the order GitHub sent them: the
 * events of one pull request (opened, a push, a comment, a check's button, closed) never race.
 */
export function orderingKey(payload: unknown): string {
  const p = (payload ?? {}) as {
    repository?: { id?: number };
    pull_request?: { number?: number };
    issue?: { number?: number };
    check_run?: { pull_requests?: { number?: number }[] };
  };
  const pull = p.pull_request?.number ?? p.issue?.number ?? p.check_run?.pull_requests?.[0]?.number;
  return `${p.repository?.id ?? 'none'}#${pull ?? 'repository'}`;
}
