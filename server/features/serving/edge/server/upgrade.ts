import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { PROBE_HEADER } from '../../../../core/edge-headers.ts';
import { BYPASS_HEADER } from '../../protection/protection-cookie.ts';
import { refuseUpgrade } from '../proxy.ts';
import { guardOf, normalizeHost, severalHosts } from '../resolve-host.ts';
import type { EdgeContext } from './context.ts';
import { appPort, type AppPort } from './to-app.ts';

/** WebSocket and other upgrades reach server apps only; anything else is refused plainly. */
export function handleUpgrade(edge: EdgeContext, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const { opts } = edge;
  socket.on('error', () => socket.destroy());
  if (severalHosts(req.rawHeaders)) return refuseUpgrade(socket, 400);
  delete req.headers[PROBE_HEADER];
  const bypassHeader = req.headers[BYPASS_HEADER];
  delete req.headers[BYPASS_HEADER];
  const bypass = typeof bypassHeader === 'string' ? bypassHeader : undefined;
  opts.resolver
    .resolve(req.headers.host)
    .then(async (r) => {
      const guard = guardOf(r);
      if (guard?.protection) {
        const host = normalizeHost(req.headers.host);
        const allowed = (await opts.protection?.admits(req, host, guard, bypass)) ?? false;
        if (!allowed) return refuseUpgrade(socket, 401);
      }
      const app: AppPort = r.kind === 'target' ? await appPort(edge, r.target, req) : 'static';
      if (typeof app === 'number') return edge.proxy.forwardUpgrade(req, socket, head, app);
      refuseUpgrade(socket, app === 'static' ? 404 : 502);
    })
    .catch((err: unknown) => {
      opts.onError?.(err, req);
      refuseUpgrade(socket, 500);
    });
}
