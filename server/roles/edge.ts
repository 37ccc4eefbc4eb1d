import { join } from 'node:path';
import type { Config } from '../platform/config.ts';
import { blobStoreOf } from '../platform/storage/open-blob-store.ts';
import { createDiskCache, localFilesOf, type LocalFiles } from '../platform/storage/local-files.ts';
import type { Server } from 'node:http';
import { redactUrl } from '../core/redact-url.ts';
import {
  createArtifactReader,
  createRuntimeLauncher,
  proxyFor,
  createHostResolver,
  createRuntimeLogSink,
  createRuntimeSupervisor,
  type RuntimeSupervisor,
  createServingLoad,
  createEdgeServer,
  type EdgeServerOptions,
  type RequestRecord,
  startInactiveAppStopper,
  createProtectionGate,
  protectionGateDeps,
  startTlsListener,
  type TlsListener,
  watchOtherWriters,
  findChallenge,
} from '../features/serving/roles.ts';
import { registerServerApps } from '../platform/ops-metrics/server-apps.ts';
import { describeBytes } from '../core/format.ts';
import { listenError } from '../core/startup-error.ts';
import {
  startRuntimeSampler,
  createRequestRecorder,
  createProbeCheck,
} from '../features/monitoring/roles.ts';
import type { Sandbox } from '../platform/sandbox/index.ts';
import type { Deps } from '../platform/deps/deps.ts';
import { resolveBuildEnv } from '../features/deployments/roles.ts';
import { planOfProject, sandboxShare } from '../features/identity/roles.ts';
import { onRoutingChange } from '../platform/deps/routing-signal.ts';

export interface EdgeRole {
  server: Server;
  port: number;
  /** The HTTPS listener's port, when SLIPWAY_EDGE_TLS_PORT is set. */
  tlsPort?: number;
  /** The server apps this edge runs (tests and diagnostics read their status). */
  supervisor: Pick<RuntimeSupervisor, 'status' | 'portOf'>;
  stop(): Promise<void>;
}

export interface EdgeOptions {
  /** How often the edge checks that the projects of its running apps are still active (default 1 s). */
  appCheckIntervalMs?: number;
}

/**
 * The edge role: serves deployments on SLIPWAY_EDGE_PORT (and custom domains over HTTPS on
 * SLIPWAY_EDGE_TLS_PORT), runs server apps and samples their CPU and memory, records traffic,
 * answers ACME challenges. Suspending or deleting a project stops its apps here at once.
 */
export async function startEdge(deps: Deps, sandbox: Sandbox, opts: EdgeOptions = {}): Promise<EdgeRole> {
  const { config } = deps;
  const resolver = createHostResolver(deps, { ttlMs: config.edgeRouteTtlMs });
  const apps = await startServerApps(deps, sandbox);
  const { supervisor, launcher } = apps;
  const recorder = createRequestRecorder(deps);
  const load = servingLoadOf(deps, sandbox);
  const server = createEdgeServer({
    resolver,
    artifactsRoot: apps.localRoot,
    artifacts: apps.artifacts,
    fileCacheBytes: config.edgeFileCacheBytes,
    supervisor,
    proxy: apps.proxy,
    launcher,
    onRequest: edgeRequestHook(deps, (r) => {
      recorder.record(r);
      load?.record(r.projectId);
    }),
    ...edgeRecordingOptions(deps),
    acmeChallenge: (token) => findChallenge(deps, token),
    protection: createProtectionGate({
      ...protectionGateDeps(deps),
      forget: (projectId) => resolver.invalidate(projectId),
    }),
    onError: (err, req) =>
      deps.log.error({ err, host: req.headers.host, url: redactUrl(req.url ?? '') }, 'edge error'),
  });
  if (config.metrics.enabled) registerServerApps(deps.ops, supervisor);
  const following = followRouting(deps, resolver, launcher, opts);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(listenError(err, config.edgePort, 'the edge', 'SLIPWAY_EDGE_PORT')));
    server.listen(config.edgePort, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.edgePort;
  let tls: TlsListener | undefined;
  /** Everything this role started, in reverse: also what a failed start leaves. */
  const stopAll = async () => {
    await following.stop();
    await tls?.stop();
    server.closeIdleConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await apps.stop();
    await recorder.close();
    await load?.stop();
  };
  if (config.edgeTlsPort !== undefined) {
    const tlsPort = config.edgeTlsPort;
    tls = await startTlsListener(deps, server, tlsPort).catch(async (err: unknown) => {
      await stopAll();
      throw listenError(err, tlsPort, "the edge's HTTPS", 'SLIPWAY_EDGE_TLS_PORT');
    });
  }
  return {
    server,
    port,
    ...(tls ? { tlsPort: tls.port } : {}),
    supervisor,
    stop: stopAll,
  };
}

/**
 * What the edge serves by plan, told to the sandbox's CPU pools (a paying tenant's busy site holds
 * the lower plans to their `cpu-cap`, as its builds do); null where sandboxes have no CPU pools.
 */
function servingLoadOf(deps: Deps, sandbox: Sandbox) {
  if (!sandbox.served) return null;
  // Real time, as the CPU time it is set against (deps.clock may be a test's fake).
  return createServingLoad({
    lookUpPlan: (projectId) => planOfProject(deps, projectId),
    served: (cpuByPlan) => sandbox.served?.(cpuByPlan),
  });
}

/**
 * The server apps of an edge: their supervisor (sampled for CPU and memory, logging to the
 * runtime log), the launcher that writes them out of their artifacts and starts them, and the
 * proxy in front of them.
 */
async function startServerApps(deps: Deps, sandbox: Sandbox) {
  const { config } = deps;
  const sink = createRuntimeLogSink(deps, {
    limitBytes: config.runtimeLogLimitBytes,
    onError: (err) => deps.log.warn({ err }, 'runtime log write failed'),
  });
  const sampler = startRuntimeSampler(
    deps,
    createRuntimeSupervisor({
      log: (id, line, stream) => sink.log(id, line, stream),
      sandbox,
      onMemoryLimit: () => deps.ops.limitHit('memory', 'app'),
    }),
    { intervalMs: config.runtimeSampleIntervalMs },
  );
  const supervisor = sampler.supervisor;
  // One reader for the launcher and the edge: the edge reads server apps' routing rules from the
  // same manifests the launcher writes the apps out from.
  const { files, localRoot } = await edgeFilesOf(config);
  const artifacts = createArtifactReader(files, { maxBytes: config.edgeManifestCacheBytes });
  // One proxy for the edge and the launcher: an app answering a long request is not idle.
  const proxy = proxyFor(supervisor);
  const launcher = createRuntimeLauncher({
    supervisor,
    inUse: (port) => proxy.inUse(port),
    artifacts,
    runtimesDir: join(config.dataDir, 'runtimes'),
    stateDir: join(config.dataDir, 'runtimes', '.state'),
    stateMaxBytes: config.appCacheBytes,
    prepare: (dirs) => sandbox.prepare(dirs),
    onStateCleared: (id, bytes) =>
      sink.log(
        id,
        `[slipway] the app's writable folders reached ${describeBytes(bytes)}, over the ${describeBytes(config.appCacheBytes)} limit (SLIPWAY_APP_CACHE_SIZE): stopped, and reset to the build's; the next request starts it again`,
        'supervisor',
      ),
    env: async (t) => (await resolveBuildEnv(deps, t.projectId, t.environment)).vars,
    share: (t) => sandboxShare(deps, t.projectId, 'app'),
  });
  return {
    supervisor,
    launcher,
    proxy,
    artifacts,
    localRoot,
    /** After the edge stopped taking requests. */
    async stop() {
      launcher.close();
      await sampler.stop();
      await supervisor.stopAll();
      await sink.close();
    },
  };
}

/**
 * Keeps the edge's routes and running apps in step with the projects: a routing signal (or, on
 * SQLite, a write by another process) forgets cached routes and stops the apps of suspended or
 * deleted projects; a timer checks them too.
 */
function followRouting(
  deps: Deps,
  resolver: { invalidate(projectId: string | null): void },
  launcher: Parameters<typeof startInactiveAppStopper>[1],
  opts: EdgeOptions,
): { stop(): Promise<void> } {
  const stopper = startInactiveAppStopper(deps, launcher, {
    clock: deps.clock,
    ...(opts.appCheckIntervalMs ? { intervalMs: opts.appCheckIntervalMs } : {}),
    onStopped: (projectId) => {
      // Found by the timer, so perhaps never signalled here (`slipway project suspend` beside a
      // SQLite serve): the cached route would start the app again.
      resolver.invalidate(projectId);
      deps.log.info({ projectId }, 'stopped the server apps of a suspended or deleted project');
    },
    onError: (err) => deps.log.warn({ err }, 'could not check the projects of running server apps'),
  });
  // Resolver first: from here on, requests for the project get its suspended or unknown page.
  const unsubscribe = onRoutingChange(deps, (projectId) => {
    resolver.invalidate(projectId);
    void stopper.check();
  });
  // SQLite: a `slipway project` command run beside this process sends no signal here.
  const otherWriters = watchOtherWriters(
    deps.store,
    () => {
      resolver.invalidate(null);
      void stopper.check();
    },
    { onError: (err) => deps.log.warn({ err }, 'could not check the database for other writers') },
  );
  return {
    async stop() {
      unsubscribe();
      await otherWriters.stop();
      await stopper.stop();
    },
  };
}

/**
 * The artifacts' files as this edge reads them: in the artifacts directory, or (object storage)
 * fetched once into its own bounded cache on disk. `localRoot` holds its compressed copies.
 */
export async function edgeFilesOf(config: Config): Promise<{ files: LocalFiles; localRoot: string }> {
  const store = blobStoreOf(config);
  if (!config.objectStorage) return { files: localFilesOf(store), localRoot: config.artifactsDir };
  const { dir, maxBytes } = config.edgeDiskCache;
  return { files: await createDiskCache(store, { dir: join(dir, 'objects'), maxBytes }), localRoot: dir };
}

/**
 * What the edge does with each answered request: the traffic rollups always, and with metrics on
 * the operator's counter and histogram too (two operations: docs/performance.md measures them).
 */
function edgeRequestHook(
  deps: Pick<Deps, 'config' | 'ops'>,
  record: (r: RequestRecord) => void,
): (r: RequestRecord) => void {
  if (!deps.config.metrics.enabled) return record;
  const ops = deps.ops;
  return (r) => {
    record(r);
    ops.edgeRequest(r.status, r.durationMs);
  };
}

/** How the edge tells the monitoring run's probes from visitors (they are not counted as traffic). */
export function edgeRecordingOptions(
  deps: Pick<Deps, 'cipher' | 'clock'>,
): Pick<EdgeServerOptions, 'isProbe'> {
  return { isProbe: createProbeCheck(deps) };
}
