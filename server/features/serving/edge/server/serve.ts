import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { challengeTokenOf } from '../../certificates/challenge-store.ts';
import { DEPLOYMENT_HEADER, PROBE_HEADER } from '../../../../core/edge-headers.ts';
import { BYPASS_HEADER } from '../../protection/protection-cookie.ts';
import { EDGE_PAGES, sendPage } from '../pages.ts';
import { isPrivate } from '../private-answers.ts';
import { guardOf, normalizeHost, severalHosts, type Resolution } from '../resolve-host.ts';
import type { ByteCounter } from '../static.ts';
import { answer } from './answer.ts';
import type { EdgeContext } from './context.ts';
import type { RequestRecord } from './types.ts';

/** The project a request was about; none when its host was unknown or not resolved. */
function projectIdOf(r: Resolution | undefined): string | null {
  if (!r || r.kind === 'unknown') return null;
  return r.kind === 'target' ? r.target.projectId : r.projectId;
}

/** The deployment a request was about, if any. */
function deploymentIdOf(r: Resolution | undefined): string | null {
  if (r?.kind === 'target') return r.target.deploymentId;
  return r?.kind === 'not-ready' ? r.deploymentId : null;
}

/** Passes one answered request to `onRequest`; metrics must never break serving. */
function report(
  onRequest: (record: RequestRecord) => void,
  res: ServerResponse,
  host: string,
  r: Resolution | undefined,
  started: number,
  counter: ByteCounter,
): void {
  try {
    onRequest({
      projectId: projectIdOf(r),
      deploymentId: deploymentIdOf(r),
      host,
      status: res.statusCode,
      durationMs: performance.now() - started,
      bytes: counter.bytes,
    });
  } catch {
    // Metrics must never break serving.
  }
}

/** Every request: an ACME challenge's answer when it is one, else served (see serve). */
export function handleRequest(edge: EdgeContext, req: IncomingMessage, res: ServerResponse): void {
  const { opts } = edge;
  const token = opts.acmeChallenge ? challengeTokenOf(req.url) : null;
  if (!token || !opts.acmeChallenge) return serve(edge, req, res);
  opts.acmeChallenge(token).then(
    (keyAuthorization) => {
      if (keyAuthorization === null) return serve(edge, req, res);
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
      res.end(keyAuthorization);
    },
    (err: unknown) => {
      opts.onError?.(err, req);
      serve(edge, req, res);
    },
  );
}

/** Serves a request by its Host header and records it (see EdgeServerOptions.onRequest). */
function serve(edge: EdgeContext, req: IncomingMessage, res: ServerResponse): void {
  const { opts } = edge;
  const started = performance.now();
  const counter: ByteCounter = { bytes: 0 };
  const host = normalizeHost(req.headers.host);
  const probeHeader = req.headers[PROBE_HEADER];
  let probe = false;
  if (probeHeader !== undefined) {
    // Never forwarded: a server app must not learn a token it could replay.
    delete req.headers[PROBE_HEADER];
    probe = typeof probeHeader === 'string' && (opts.isProbe?.(probeHeader) ?? false);
  }
  // Taken off every request: no app (protected or not) ever sees, or logs, the bypass secret.
  const bypassHeader = req.headers[BYPASS_HEADER];
  let bypass: string | undefined;
  if (bypassHeader !== undefined) {
    delete req.headers[BYPASS_HEADER];
    bypass = typeof bypassHeader === 'string' ? bypassHeader : undefined;
  }
  // No closures made per request here (each costs an allocation, and a `name` definition
  // under tsx): the resolution is kept in a variable that the rare late callbacks read.
  let resolution: Resolution | undefined;
  // A warm request (host, manifest and file in memory) is answered without leaving this turn,
  // and then recorded at once; any other is recorded when its response closes.
  try {
    if (severalHosts(req.rawHeaders)) {
      // Recorded below as the host's request, with no project: it reached none.
      counter.bytes += sendPage(req, res, EDGE_PAGES.severalHosts());
    } else {
      resolution = opts.resolver.peek(host);
      const pending = resolution
        ? answer(edge, req, res, host, resolution, counter, probe, bypass)
        : opts.resolver.resolve(host).then((r) => {
            resolution = r;
            return answer(edge, req, res, host, r, counter, probe, bypass);
          });
      pending?.catch((err: unknown) => fail(edge, req, res, resolution, counter, err));
    }
  } catch (err) {
    fail(edge, req, res, resolution, counter, err);
  }
  const onRequest = opts.onRequest;
  if (!onRequest || probe) return;
  if (res.writableEnded) report(onRequest, res, host, resolution, started, counter);
  else res.once('close', () => report(onRequest, res, host, resolution, started, counter));
}

/** An unexpected failure: the 500 page when nothing is sent yet, else the connection is cut. */
function fail(
  edge: EdgeContext,
  req: IncomingMessage,
  res: ServerResponse,
  r: Resolution | undefined,
  counter: ByteCounter,
  err: unknown,
): void {
  edge.opts.onError?.(err, req);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const deploymentId = deploymentIdOf(r);
  // A protected host's deployment is named only to those the gate let through.
  const named = !r || !guardOf(r)?.protection || isPrivate(res);
  if (deploymentId && named) res.setHeader(DEPLOYMENT_HEADER, deploymentId);
  counter.bytes += sendPage(req, res, EDGE_PAGES.edgeError());
}
