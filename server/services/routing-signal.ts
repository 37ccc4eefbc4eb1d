import { EventEmitter } from 'node:events';
import { ROUTING_CHANNEL, type Notifier } from '../store/notify.ts';

/**
 * The signal "what one project's hosts serve may have changed" (a deployment changed state, a
 * production switch, the project renamed, suspended, resumed or deleted, a domain verified or
 * removed). Each edge drops the cached routes of that project (and its unknown-host answers) at
 * once: in this process through the emitter, in other processes through the notifier that
 * `connectRouting` wires (LISTEN/NOTIFY on PostgreSQL, the project id as payload). The edge's
 * cache expiry (SLIPWAY_EDGE_ROUTE_TTL) stays the fallback for a lost signal.
 */
const routing = new EventEmitter();
routing.setMaxListeners(0);
const publishers = new Set<(projectId: string) => void>();

/** Call after the change to `projectId` has committed. */
export function signalRoutingChange(projectId: string): void {
  routing.emit('change', projectId);
  for (const publish of publishers) publish(projectId);
}

/**
 * `projectId` is null when any route may have changed: signals may have been missed (the
 * listening connection was re-established), or a process that names no project sent one.
 */
export function onRoutingChange(listener: (projectId: string | null) => void): () => void {
  routing.on('change', listener);
  return () => routing.off('change', listener);
}

/**
 * Carries routing changes between processes: ours are published, other processes' (and a
 * reconnect, when some may have been missed) reach this process's listeners. Returns the undo.
 * `listen: false` only publishes: a one-shot command (`slipway project suspend`) tells the
 * edges without holding a listening connection of its own.
 */
export function connectRouting(notifier: Notifier, opts: { listen?: boolean } = {}): () => void {
  if (!notifier.crossProcess) return () => undefined;
  const publish = (projectId: string) => notifier.publish(ROUTING_CHANNEL, projectId);
  publishers.add(publish);
  const unsubscribe =
    opts.listen === false
      ? () => undefined
      : notifier.subscribe(ROUTING_CHANNEL, (payload) => routing.emit('change', payload || null));
  return () => {
    publishers.delete(publish);
    unsubscribe();
  };
}
