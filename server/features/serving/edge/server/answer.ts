import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEPLOYMENT_HEADER } from '../../../../core/edge-headers.ts';
import { EDGE_PAGES } from '../pages.ts';
import { markPrivate } from '../private-answers.ts';
import { guardOf, type Resolution } from '../resolve-host.ts';
import type { ByteCounter } from '../static.ts';
import { serveTarget } from './app-rules.ts';
import type { EdgeContext } from './context.ts';
import { page } from './page.ts';

/**
 * Answers a resolved request: at once when it can (a warm static file), else via the promise.
 * Every answer about a deployment names it (DEPLOYMENT_HEADER).
 */
export function answer(
  edge: EdgeContext,
  req: IncomingMessage,
  res: ServerResponse,
  host: string,
  r: Resolution,
  counter: ByteCounter,
  probe: boolean,
  bypass: string | undefined,
): void | Promise<void> {
  // The usual case first: a deployment, served to anyone (one check on the way).
  if (r.kind === 'target' && !r.target.protection) return serveTarget(edge, req, res, r.target, counter);
  const guard = guardOf(r);
  // A protected host: everything the edge answers there, its own pages about the deployment
  // (building, failed, no preview yet) as much as the deployment, waits for the gate. The
  // service's own probes pass.
  if (guard?.protection && !probe) {
    const gate = edge.opts.protection;
    if (!gate) return page(req, res, counter, EDGE_PAGES.protectedHost());
    const through = gate.check(req, res, host, guard, bypass);
    if (through !== true) {
      return through instanceof Promise
        ? through.then((t) => (t === true ? admitted(edge, req, res, host, r, counter) : undefined))
        : undefined;
    }
  }
  return guard?.protection
    ? admitted(edge, req, res, host, r, counter)
    : respond(edge, req, res, host, r, counter);
}

/** A protected host's request that the gate let through: answered privately (never kept by a shared cache). */
function admitted(
  edge: EdgeContext,
  req: IncomingMessage,
  res: ServerResponse,
  host: string,
  r: Resolution,
  counter: ByteCounter,
): void | Promise<void> {
  markPrivate(res);
  return respond(edge, req, res, host, r, counter);
}

/** What a resolution serves: the deployment, or the edge's page why not. */
function respond(
  edge: EdgeContext,
  req: IncomingMessage,
  res: ServerResponse,
  host: string,
  r: Resolution,
  counter: ByteCounter,
): void | Promise<void> {
  switch (r.kind) {
    case 'target':
      return serveTarget(edge, req, res, r.target, counter);
    case 'unknown':
      return page(req, res, counter, EDGE_PAGES.unknownHost(host));
    case 'suspended':
      return page(req, res, counter, EDGE_PAGES.suspended(host));
    case 'no-production':
      return page(req, res, counter, EDGE_PAGES.noProduction(host));
    case 'no-branch-deployment':
      return page(req, res, counter, EDGE_PAGES.noBranchDeployment(host));
    case 'not-ready':
      res.setHeader(DEPLOYMENT_HEADER, r.deploymentId);
      return page(
        req,
        res,
        counter,
        r.status === 'failed'
          ? EDGE_PAGES.failed(r.deploymentId)
          : EDGE_PAGES.building(r.deploymentId, r.status),
      );
  }
}
