import type { Deps } from './deps.ts';

/** Notifier channel of "what a project's hosts serve may have changed"; the payload is the project id. */
export const ROUTING_CHANNEL = 'slipway_routing';

/**
 * The signal "what one project's hosts serve may have changed" (a deployment changed state, a
 * production switch, the project renamed, suspended, resumed or deleted, a domain verified or
 * removed). Each edge drops the cached routes of that project (and its unknown-host answers) at
 * once: in this process before this returns (a request right after the change sees it), in the
 * others through LISTEN/NOTIFY on PostgreSQL. The edge's cache expiry (SLIPWAY_EDGE_ROUTE_TTL)
 * stays the fallback for a lost signal. Call after the change to `projectId` has committed.
 */
export function signalRoutingChange(deps: Pick<Deps, 'store'>, projectId: string): void {
  deps.store.notifier.publish(ROUTING_CHANNEL, projectId, { localNow: true });
}

/**
 * `projectId` is null when any route may have changed: signals may have been missed (the
 * listening connection was re-established), or a process that names no project sent one.
 */
export function onRoutingChange(
  deps: Pick<Deps, 'store'>,
  listener: (projectId: string | null) => void,
): () => void {
  return deps.store.notifier.subscribe(ROUTING_CHANNEL, (payload) => listener(payload || null));
}
