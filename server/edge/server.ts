import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { createArtifactReader, type ArtifactReader } from './artifact-reader.ts';
import { createBlobCache } from './blob-cache.ts';
import { createCompressedCache } from './compression.ts';
import { DEPLOYMENT_HEADER } from '../lib/edge-headers.ts';
import { EDGE_PAGES, sendPage, type EdgePage } from './pages.ts';
import { createProxy, refuseUpgrade, type AnswerShaper } from './proxy.ts';
import { EdgeResponse, isPrivate, markPrivate } from './private-answers.ts';
import { guardOf, normalizeHost, type HostResolver, type Resolution, type Target } from './resolve-host.ts';
import type { RuntimeLauncher } from './launcher.ts';
import { applyHeaderRules } from '../routing/apply-headers.ts';
import { NO_RULES, type HeaderMatch, type RoutingRules } from '../routing/match-rules.ts';
import { rulesArtifactOf, rulesFolderOf } from '../routing/rules-folder.ts';
import { sendRedirect } from './send-redirect.ts';
import type { RuntimeSupervisor } from './runtime.ts';
import { createStaticServer, requestPath, type ByteCounter } from './static.ts';
import { challengeTokenOf } from '../certificates/challenge-store.ts';
import { PROBE_HEADER } from '../lib/edge-headers.ts';
import { BYPASS_HEADER } from '../services/protection/protection-cookie.ts';
import type { ProtectionGate } from './protection-gate.ts';

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
  supervisor?: Pick<RuntimeSupervisor, 'portOf'> &
    Partial<Pick<RuntimeSupervisor, 'openConnection' | 'canConnect'>>;
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
  /**
   * The artifact reader, to share its manifests with the launcher (which writes server apps out
   * from them); by default one of its own, bounded by `manifestCacheBytes`.
   */
  artifacts?: ArtifactReader;
  /** Small files' bytes kept (config.edgeFileCacheBytes; default 256 MiB). */
  fileCacheBytes?: number;
  /**
   * Decides requests to protected hosts (docs/protection.md). Without it a protected host answers
   * 401 to everyone but the service's own probes: protection fails closed.
   */
  protection?: ProtectionGate;
}

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

/** For server apps' `_redirects`: no file of theirs is served by the edge, so none shadows a rule. */
const noFiles = () => false;

/** Applies `_headers` to an app's answer, and a `_redirects` 404 rule to its status (a 200 becomes 404). */
function shaperFor(headerRules: readonly HeaderMatch[] | null, notFound: boolean): AnswerShaper {
  return (status, headers) => {
    if (headerRules) applyHeaderRules(headers, headerRules);
    return notFound && status === 200 ? 404 : status;
  };
}

/** Answers with one of the edge's own pages (see pages.ts), counting its bytes. */
function page(req: IncomingMessage, res: ServerResponse, counter: ByteCounter, edgePage: EdgePage): void {
  counter.bytes += sendPage(req, res, edgePage);
}

/** The edge: a plain node:http server that serves every deployment by its Host header. */
export function createEdgeServer(opts: EdgeServerOptions): Server {
  const artifacts =
    opts.artifacts ??
    createArtifactReader(opts.artifactsRoot, {
      ...(opts.manifestCacheBytes ? { maxBytes: opts.manifestCacheBytes } : {}),
    });
  const compressed = createCompressedCache(opts.artifactsRoot);
  const blobs = createBlobCache(opts.fileCacheBytes ? { maxBytes: opts.fileCacheBytes } : {});
  const files = createStaticServer({ artifacts, compressed, blobs });
  const supervisor = opts.supervisor;
  const proxy = createProxy(
    supervisor?.openConnection && supervisor.canConnect
      ? {
          connect: (port, done) => supervisor.openConnection!(port, done),
          canConnect: (port) => supervisor.canConnect!(port),
        }
      : {},
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
    probe: boolean,
    bypass: string | undefined,
  ): void | Promise<void> {
    // The usual case first: a deployment, served to anyone (one check on the way).
    if (r.kind === 'target' && !r.target.protection) return serveTarget(req, res, r.target, counter);
    const guard = guardOf(r);
    // A protected host: everything the edge answers there, its own pages about the deployment
    // (building, failed, no preview yet) as much as the deployment, waits for the gate. The
    // service's own probes pass.
    if (guard?.protection && !probe) {
      const gate = opts.protection;
      if (!gate) return page(req, res, counter, EDGE_PAGES.protectedHost());
      const through = gate.check(req, res, host, guard, bypass);
      if (through !== true) {
        return through instanceof Promise
          ? through.then((t) => (t === true ? admitted(req, res, host, r, counter) : undefined))
          : undefined;
      }
    }
    return guard?.protection ? admitted(req, res, host, r, counter) : respond(req, res, host, r, counter);
  }

  /** A protected host's request that the gate let through: answered privately (never kept by a shared cache). */
  function admitted(
    req: IncomingMessage,
    res: ServerResponse,
    host: string,
    r: Resolution,
    counter: ByteCounter,
  ): void | Promise<void> {
    markPrivate(res);
    return respond(req, res, host, r, counter);
  }

  /** What a resolution serves: the deployment, or the edge's page why not. */
  function respond(
    req: IncomingMessage,
    res: ServerResponse,
    host: string,
    r: Resolution,
    counter: ByteCounter,
  ): void | Promise<void> {
    switch (r.kind) {
      case 'target':
        return serveTarget(req, res, r.target, counter);
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

  /** A resolved target's request, once any protection let it through. */
  function serveTarget(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    counter: ByteCounter,
  ): void | Promise<void> {
    // A server app's rules are applied here, before it is started (a redirect never wakes
    // it); a static site's by the static server, which knows its files.
    if (target.kind === 'node' && target.artifactId) {
      const rules = appRules(target, rulesArtifactOf(target));
      if (rules === NO_RULES) return toServer(req, res, target, counter);
      return rules instanceof Promise
        ? rules.then((x) => routeToApp(req, res, target, x, counter))
        : routeToApp(req, res, target, rules, counter);
    }
    return toTarget(req, res, target, counter);
  }

  /** A server app's routing rules, read from its artifact (see rulesFolderOf). */
  function appRules(target: Target, artifactId: string): RoutingRules | Promise<RoutingRules> {
    const folder = rulesFolderOf(target);
    const manifest = artifacts.peek(artifactId);
    if (manifest) return artifacts.routingRules(manifest, folder);
    return artifacts.manifest(artifactId).then((m) => (m ? artifacts.routingRules(m, folder) : NO_RULES));
  }

  /**
   * A server app's request by its `_redirects` and `_headers`: a redirect is answered here without
   * the app; a rewrite goes to the app with the target's path (a 404 rule turns the app's 200 into
   * a 404); the matching headers are applied to the app's answer. No file shadows a rule: the
   * edge serves none of a server app's files.
   */
  function routeToApp(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    rules: RoutingRules,
    counter: ByteCounter,
  ): void | Promise<void> {
    const path = requestPath(req.url);
    // A path that does not decode is the app's to answer, as without rules.
    if (path === null) return toServer(req, res, target, counter);
    const answer = rules.redirect(path, req.url ?? '/', noFiles);
    const headerRules = rules.headers(path);
    if (answer?.kind === 'redirect') {
      counter.bytes += sendRedirect(req, res, target.deploymentId, answer, headerRules);
      return;
    }
    if (answer) req.url = answer.url;
    const notFound = answer?.status === 404;
    if (!headerRules && !notFound) return toServer(req, res, target, counter);
    return toServer(req, res, target, counter, shaperFor(headerRules, notFound));
  }

  /**
   * A server app's request that no rule answered: a static asset of its, at exactly its path,
   * is the edge's to answer (the app is not woken for it); anything else goes to the app.
   */
  function toServer(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    counter: ByteCounter,
    shape?: AnswerShaper,
  ): void | Promise<void> {
    if (!target.assetsArtifactId) return toTarget(req, res, target, counter, shape);
    const asset = files.serveAsset(req, res, target, counter);
    if (asset === true) return;
    if (asset === false) return toTarget(req, res, target, counter, shape);
    return asset.then((sent) => (sent ? undefined : toTarget(req, res, target, counter, shape)));
  }

  /** Sends a target's request to its server process (started if need be) or its files. */
  function toTarget(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    counter: ByteCounter,
    shape?: AnswerShaper,
  ): void | Promise<void> {
    const app = appPort(target, req);
    return typeof app === 'object'
      ? app.then((a) => toApp(req, res, target, a, counter, shape))
      : toApp(req, res, target, app, counter, shape);
  }

  /** Sends a target's request where it goes: its server process, its files, or a page why not. */
  function toApp(
    req: IncomingMessage,
    res: ServerResponse,
    target: Target,
    app: AppPort,
    counter: ByteCounter,
    shape?: AnswerShaper,
  ): void | Promise<void> {
    // Files name the deployment themselves, in the fields their answers are written with.
    if (app === 'static') return files.serve(req, res, target, counter);
    // The proxy names the deployment in the app's answer fields itself (a setHeader here would
    // send every proxied writeHead down Node's slower path).
    if (typeof app === 'number') return proxy.forward(req, res, app, counter, target.deploymentId, shape);
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

  // EdgeResponse: a protected host's answers are made private in one place (private-answers.ts).
  const server = createServer({ ServerResponse: EdgeResponse }, (req, res) => {
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
      resolution = opts.resolver.peek(host);
      const pending = resolution
        ? answer(req, res, host, resolution, counter, probe, bypass)
        : opts.resolver.resolve(host).then((r) => {
            resolution = r;
            return answer(req, res, host, r, counter, probe, bypass);
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
    // A protected host's deployment is named only to those the gate let through.
    const named = !r || !guardOf(r)?.protection || isPrivate(res);
    if (deploymentId && named) res.setHeader(DEPLOYMENT_HEADER, deploymentId);
    counter.bytes += sendPage(req, res, EDGE_PAGES.edgeError());
  }

  // WebSocket and other upgrades reach server apps only; anything else is refused plainly.
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
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
