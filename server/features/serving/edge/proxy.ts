import { createProxyState } from './proxy/state.ts';
import { proxyOf } from './proxy/proxy-of.ts';
import type { DirectConnect, Proxy, ProxyOptions } from './proxy/types.ts';

export type { AnswerShaper, DirectConnect, Proxy, ProxyOptions } from './proxy/types.ts';
export { refuseUpgrade } from './proxy/upgrade.ts';

/**
 * The proxy to the apps `supervisor` runs: connections opened from inside each app's sandbox when
 * it can (RuntimeSupervisor's openConnection), else to 127.0.0.1:port.
 */
export function proxyFor(supervisor?: {
  openConnection?: DirectConnect;
  canConnect?: (port: number) => boolean;
}): Proxy {
  return createProxy(
    supervisor?.openConnection && supervisor.canConnect
      ? {
          connect: (port, done) => supervisor.openConnection!(port, done),
          canConnect: (port) => supervisor.canConnect!(port),
        }
      : {},
  );
}

/**
 * Forwards requests to server apps on 127.0.0.1. Its parts, in proxy/: state.ts (the kept
 * connections, from inside each app's sandbox or through pasta), proxy-of.ts (a request, a
 * WebSocket, whether an app is in use), fields.ts (the headers passed on, each way),
 * forwarding.ts (one request on its way and its answer back), upgrade.ts (WebSocket).
 */
export function createProxy(opts: ProxyOptions = {}): Proxy {
  return proxyOf(createProxyState(opts));
}
