import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEPLOYMENT_HEADER } from '../../../../core/edge-headers.ts';
import { EDGE_PAGES } from '../pages.ts';
import type { AnswerShaper } from '../proxy.ts';
import type { Target } from '../resolve-host.ts';
import type { ByteCounter } from '../static.ts';
import type { EdgeContext } from './context.ts';
import { page } from './page.ts';

/** Where a target's requests go: a port to proxy to, its files (`static`), or why neither. */
export type AppPort = number | 'static' | 'not-running' | 'start-failed';

/** Sends a target's request to its server process (started if need be) or its files. */
export function toTarget(
  edge: EdgeContext,
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  counter: ByteCounter,
  shape?: AnswerShaper,
): void | Promise<void> {
  const app = appPort(edge, target, req);
  return typeof app === 'object'
    ? app.then((a) => toApp(edge, req, res, target, a, counter, shape))
    : toApp(edge, req, res, target, app, counter, shape);
}

/** Sends a target's request where it goes: its server process, its files, or a page why not. */
function toApp(
  edge: EdgeContext,
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  app: AppPort,
  counter: ByteCounter,
  shape?: AnswerShaper,
): void | Promise<void> {
  // Files name the deployment themselves, in the fields their answers are written with.
  if (app === 'static') return edge.files.serve(req, res, target, counter);
  // The proxy names the deployment in the app's answer fields itself (a setHeader here would
  // send every proxied writeHead down Node's slower path).
  if (typeof app === 'number') return edge.proxy.forward(req, res, app, counter, target.deploymentId, shape);
  res.setHeader(DEPLOYMENT_HEADER, target.deploymentId);
  if (app === 'start-failed') {
    return page(req, res, counter, EDGE_PAGES.startFailed(target.deploymentId));
  }
  return page(req, res, counter, EDGE_PAGES.notRunning(target.deploymentId));
}

/**
 * Where a target's server process listens (started on demand when there is a launcher), or why
 * there is none: `static` means serve files. A `node` deployment never falls back to its files:
 * they are its source, secrets and all.
 */
export function appPort(edge: EdgeContext, target: Target, req: IncomingMessage): AppPort | Promise<AppPort> {
  const { opts } = edge;
  const launcher = opts.launcher;
  if (target.kind === 'node' && launcher) {
    const running = launcher.runningPort(target.deploymentId);
    if (running !== undefined) return running;
    return launcher.ensure(target).then(
      (port) => {
        launcher.touch(target.deploymentId);
        return port;
      },
      (err: unknown) => {
        opts.onError?.(err, req);
        return 'start-failed' as const;
      },
    );
  }
  const port = target.runtime?.port ?? opts.supervisor?.portOf(target.deploymentId);
  if (port !== undefined) return port;
  return target.kind === 'node' ? 'not-running' : 'static';
}
