import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { createArtifactReader } from './artifact-reader.ts';
import { createBlobCache } from './blob-cache.ts';
import { createCompressedCache } from './compression.ts';
import { DEPLOYMENT_HEADER } from './deployment-header.ts';
import { EDGE_PAGES, sendPage, type EdgePage } from './pages.ts';
import { createProxy, refuseUpgrade } from './proxy.ts';
import { normalizeHost, type HostResolver, type Resolution, type Target } from './resolve-host.ts';
import type { RuntimeLauncher } from './launcher.ts';
import type { RuntimeSupervisor } from './runtime.ts';
import { createStaticServer, type ByteCounter } from './static.ts';
import { challengeTokenOf } from '../certificates/challenge-store.ts';
import { PROBE_HEADER } from '../monitoring/probe-token.ts';

/** One answered request, for traffic metrics. */
export interface RequestRecord {
  /** null when the host matched no project. */
  projectId: string | null;
  deploymentId: string | null;
  /** The Host header, lowercased and without port. */
  host: string;
  status: number;
  /** From the request's arrival until its response was written out or the client left. */
  durationMs: number;
  /** Body bytes sent. */
  bytes: number;
}

export interface EdgeServerOptions {
  resolver: HostResolver;
  /** The artifact store's root directory (config.artifactsDir). */
  artifactsRoot: string;
  /**
   * Runs server apps; deployments it supervises are proxied to instead of served as files, over
   * connections it opens from inside their sandboxes when it can (openConnection).
   */
  supervisor?: Pick<RuntimeSupervisor, 'portOf'> & Partial<Pick<RuntimeSupervisor, 'openConnection'>>;
  /** Starts `node` deployments on demand; without it they answer 503 unless already supervised. */
  launcher?: Pick<RuntimeLauncher, 'ensure' | 'touch' | 'runningPort'>;
  /** Called once per response, synchronously: keep it cheap (push to a buffer). */
  onRequest?: (record: RequestRecord) => void;
  /**
   * True for the service's own health probes (a valid `X-Slipway-Probe` header): they are
   * answered as any request but not passed to `onRequest`, so they never count as traffic. The
   * header is removed before a request reaches a server app, whatever this answers.
   */
  isProbe?: (token: string) => boolean;
  /** Unexpected failures (the client gets a 500 page). */
  onError?: (err: unknown, req: IncomingMessage) => void;
  /**
   * Answers ACME HTTP-01 challenges: the key authorization of a token, or null to serve the path
   * as usual. Such requests belong to no project and are not recorded.
   */
  acmeChallenge?: (token: string) => Promise<string | null>;
  /** Parsed manifests kept, by their size as stored (config.edgeManifestCacheBytes; default 64 MiB). */
  manifestCacheBytes?: number;
  /** Small files' bytes kept (config.edgeFileCacheBytes; default 256 MiB). */
  fileCacheBytes?: number;
}

export { DEPLOYMENT_HEADER };

/** Where a target's requests go: a port to proxy to, its files (`static`), or why neither. */
type AppPort = number | 'static' | 'not-running' | 'start-failed';

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

/** Answers with one of the edge's own pages (see pages.ts), counting its bytes. */
function page(req: IncomingMessage, res: ServerResponse, counter: ByteCounter, edgePage: EdgePage): void {
  counter.bytes += sendPage(req, res, edgePage);
}

/** The edge: a plain node:http server that serves every deployment by its Host header. */
export function createEdgeServer(opts: EdgeServerOptions): Server {
  const artifacts = createArtifactReader(opts.artifactsRoot, {
    ...(opts.manifestCacheBytes ? { maxBytes: opts.manifestCacheBytes } : {}),
  });
  const compressed = createCompressedCache(opts.artifactsRoot);
  const blobs = createBlobCache(opts.fileCacheBytes ? { maxBytes: opts.fileCacheBytes } : {});
  const files = createStaticServer({ artifacts, compressed, blobs });
  const supervisor = opts.supervisor;
  const proxy = createProxy(
    supervisor?.openConnection ? { connect: (port, done) => supervisor.openConnection!(port, done) } : {},
  );

  /**
   * Answers a resolved request: at once when it can (a warm static file), else via the promise.
   * Every answer about a deployment names it (DEPLOYMENT_HEADER).
   */
  function answer(
    req: IncomingMessage,
    res: ServerResponse,
    host: string,
    r: Resolution,
    counter: ByteCounter,
  ): void | Promise<void> {
    switch (r.kind) {
      case 'unknown':
        return page(req, res, counter, EDGE_PAGES.unknownHost(host));
      case 'suspended':
        return page(req, res, counter, EDGE_PAGES.suspended(host));
      case 'no-production':
        return page(req, res, counter, EDGE_PAGES.noProduction(host));
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
      case 'target': {
        const app = appPort(r.target, req);
        return typeof app === 'object'
          ? app.then((a) => toApp(req, res, r.target, a, counter))
          : toApp(req, res, r.target, app, counter);
      }
    }
  }

  /** Sends a target's request where it goes: its server process, its files, or a page why not. */
  function toApp(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    app: AppPort,
    counter: ByteCounter,
  ): void | Promise<void> {
    // Files name the deployment themselves, in the fields their answers are written with.
    if (app === 'static') return files.serve(req, res, target, counter);
    // The proxy names the deployment in the app's answer fields itself (a setHeader here would
    // send every proxied writeHead down Node's slower path).
    if (typeof app === 'number') return proxy.forward(req, res, app, counter, target.deploymentId);
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
  function appPort(target: Target, req: IncomingMessage): AppPort | Promise<AppPort> {
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

  const server = createServer((req, res) => {
    const token = opts.acmeChallenge ? challengeTokenOf(req.url) : null;
    if (!token || !opts.acmeChallenge) return serve(req, res);
    opts.acmeChallenge(token).then(
      (answer) => {
        if (answer === null) return serve(req, res);
        res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
        res.end(answer);
      },
      (err: unknown) => {
        opts.onError?.(err, req);
        serve(req, res);
      },
    );
  });

  function serve(req: IncomingMessage, res: ServerResponse): void {
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
    // No closures made per request here (each costs an allocation, and a `name` definition
    // under tsx): the resolution is kept in a variable that the rare late callbacks read.
    let resolution: Resolution | undefined;
    // A warm request (host, manifest and file in memory) is answered without leaving this turn,
    // and then recorded at once; any other is recorded when its response closes.
    try {
      resolution = opts.resolver.peek(host);
      const pending = resolution
        ? answer(req, res, host, resolution, counter)
        : opts.resolver.resolve(host).then((r) => {
            resolution = r;
            return answer(req, res, host, r, counter);
          });
      pending?.catch((err: unknown) => fail(req, res, resolution, counter, err));
    } catch (err) {
      fail(req, res, resolution, counter, err);
    }
    const onRequest = opts.onRequest;
    if (!onRequest || probe) return;
    if (res.writableEnded) report(onRequest, res, host, resolution, started, counter);
    else res.once('close', () => report(onRequest, res, host, resolution, started, counter));
  }

  /** An unexpected failure: the 500 page when nothing is sent yet, else the connection is cut. */
  function fail(
    req: IncomingMessage,
    res: ServerResponse,
    r: Resolution | undefined,
    counter: ByteCounter,
    err: unknown,
  ): void {
    opts.onError?.(err, req);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const deploymentId = deploymentIdOf(r);
    if (deploymentId) res.setHeader(DEPLOYMENT_HEADER, deploymentId);
    counter.bytes += sendPage(req, res, EDGE_PAGES.edgeError());
  }

  // WebSocket and other upgrades reach server apps only; anything else is refused plainly.
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    delete req.headers[PROBE_HEADER];
    opts.resolver
      .resolve(req.headers.host)
      .then(async (r) => {
        const app: AppPort = r.kind === 'target' ? await appPort(r.target, req) : 'static';
        if (typeof app === 'number') return proxy.forwardUpgrade(req, socket, head, app);
        refuseUpgrade(socket, app === 'static' ? 404 : 502);
      })
      .catch((err: unknown) => {
        opts.onError?.(err, req);
        refuseUpgrade(socket, 500);
      });
  });
  server.on('close', () => {
    proxy.close();
    compressed.stop();
  });
  return server;
}
