import type { Dispatcher } from 'undici';
import { hasBody, requestFields } from './fields.ts';
import { Forwarding } from './forwarding.ts';
import type { ProxyState } from './state.ts';
import type { Proxy } from './types.ts';
import { forwardUpgrade } from './upgrade.ts';

/**
 * The proxy's interface over its state (createProxy makes both). A request's steps are written
 * here, not behind one more call: `forward` runs on every request to a server app.
 */
export function proxyOf(s: ProxyState): Proxy {
  return {
    forward(req, res, port, counter, deploymentId, shape) {
      let origin = s.origins.get(port);
      if (origin === undefined) {
        origin = `http://127.0.0.1:${port}`;
        if (s.origins.size > 10_000) s.origins.clear();
        s.origins.set(port, origin);
      }
      const withBody = hasBody(req);
      // No body: nothing to stream, and the request's end is not waited for.
      if (!withBody) req.resume();
      const via = s.throughPasta && !s.canConnect!(port) ? s.throughPasta : s.agent;
      via.dispatch(
        {
          origin,
          path: req.url ?? '/',
          method: req.method as Dispatcher.HttpMethod,
          headers: requestFields(req),
          body: withBody ? req : null,
        },
        new Forwarding(req, res, deploymentId, counter, shape),
      );
    },
    forwardUpgrade(req, socket, head, port) {
      const { upgrades } = s;
      upgrades.set(port, (upgrades.get(port) ?? 0) + 1);
      // Counted until the visitor leaves (its end or close, whichever comes first), not until the
      // app lets go: an app holding a socket nobody is on keeps no app from going idle.
      let counted = true;
      const left = () => {
        if (!counted) return;
        counted = false;
        const open = (upgrades.get(port) ?? 1) - 1;
        if (open > 0) upgrades.set(port, open);
        else upgrades.delete(port);
      };
      socket.once('end', left);
      socket.once('close', left);
      forwardUpgrade(req, socket, head, port);
    },
    inUse(port) {
      if (s.upgrades.has(port)) return true;
      const origin = `http://127.0.0.1:${port}`;
      return (s.agent.stats[origin]?.size ?? 0) > 0 || (s.throughPasta?.stats[origin]?.size ?? 0) > 0;
    },
    close() {
      void s.agent.destroy().catch(() => undefined);
      void s.throughPasta?.destroy().catch(() => undefined);
    },
  };
}
