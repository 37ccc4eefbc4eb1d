import { EventEmitter } from 'node:events';
import { ROUTING_CHANNEL, type Notifier } from '../store/notify.ts';

/**
 * The signal "what a host serves may have changed" (a production switch, a project suspended or
 * deleted, a domain verified or removed). The edge drops its cached routes at once: in this
 * process through the emitter, in other processes through the notifier that `connectRouting`
 * wires (LISTEN/NOTIFY on PostgreSQL). The edge's short cache expiry stays the fallback.
 */
const routing = new EventEmitter();
routing.setMaxListeners(0);
const publishers = new Set<() => void>();

/** Call after the change has committed. */
export function signalRoutingChange(): void {
  routing.emit('change');
  for (const publish of publishers) publish();
}

export function onRoutingChange(listener: () => void): () => void {
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
  const publish = () => notifier.publish(ROUTING_CHANNEL, '');
  publishers.add(publish);
  const unsubscribe =
    opts.listen === false
      ? () => undefined
      : notifier.subscribe(ROUTING_CHANNEL, () => routing.emit('change'));
  return () => {
    publishers.delete(publish);
    unsubscribe();
  };
}
