import type { Socket } from 'node:net';
import type { Helper, SupervisorState } from './state.ts';

/** How long a connection from an app's helper may take before the edge goes through pasta. */
const HELPER_CONNECT_MS = 1000;

/**
 * The connection helper of the app running on `port`, when it is ready to open one: one look in
 * the index of running apps (SupervisorState.byPort), asked on every proxied request.
 */
export function readyHelper(st: SupervisorState, port: number): Helper | null {
  const helper = st.byPort.get(port)?.helper;
  return helper?.ready && helper.child.connected ? helper : null;
}

/** Asks the app's helper on `port` for a connection to it; false, calling nothing, when there is none ready. */
export function openConnection(
  st: SupervisorState,
  port: number,
  done: (socket: Socket | null) => void,
): boolean {
  const h = readyHelper(st, port);
  if (!h) return false;
  const id = ++h.next;
  const timer = setTimeout(() => {
    if (h.pending.delete(id)) done(null);
  }, HELPER_CONNECT_MS);
  timer.unref();
  h.pending.set(id, (socket) => {
    clearTimeout(timer);
    done(socket);
  });
  h.child.send({ connect: id }, (err) => {
    if (err && h.pending.delete(id)) {
      clearTimeout(timer);
      done(null);
    }
  });
  return true;
}
