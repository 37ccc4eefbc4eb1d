import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './platform/config.ts';
import type { JobHandler } from './platform/jobs/worker.ts';
import type { Dns } from './core/dns.ts';
import type { Clock } from './core/clock.ts';
import { botConfigured, startBotRole } from './roles/bot.ts';
import { startEdge, type EdgeOptions, type EdgeRole } from './roles/edge.ts';
import { startWorkerRole } from './roles/worker.ts';
import { closeDeps, createDeps } from './runtime.ts';
import { createServiceSandbox, type Sandbox } from './platform/sandbox/index.ts';
import type { Deps } from './platform/deps/deps.ts';
import { listenError } from './core/startup-error.ts';
import { tokenCommand } from './token-command.ts';
import { startOpsMetrics } from './roles/start-ops-metrics.ts';
import type { LookupAll } from './core/ssrf.ts';

export const ROLES = ['api', 'worker', 'edge', 'bot'] as const;
export type Role = (typeof ROLES)[number];

/** What `slipway serve` runs without `--role`: everything, the bot when the GitHub App is configured. */
export function defaultRoles(env: NodeJS.ProcessEnv = process.env): Role[] {
  return botConfigured(env) ? [...ROLES] : ['api', 'worker', 'edge'];
}

export interface ServeOptions {
  clock?: Clock;
  log?: Logger;
  dns?: Dns;
  /** How builds resolve repository hosts; default the system's resolver. */
  lookup?: LookupAll;
  /** Stop on SIGTERM/SIGINT and exit (default true; tests turn it off). */
  handleSignals?: boolean;
  /** Extra background jobs for the worker role. */
  jobs?: JobHandler[];
  /** Print the start-up banner (default true). */
  banner?: boolean;
  /** Settings of the edge role that are not configuration (tests shorten or lengthen its timers). */
  edge?: EdgeOptions;
}

export interface Running {
  deps: Deps;
  app?: FastifyInstance;
  /** Where the API listens, once it does. */
  apiUrl?: string;
  /** Where the edge listens, once it does. */
  edgeUrl?: string;
  /** The edge role, when it runs in this process. */
  edge?: EdgeRole;
  /** Where the GitHub App listens, when the bot role runs. */
  botUrl?: string;
  /** This process's Prometheus metrics, when SLIPWAY_METRICS_PORT is set. */
  metricsUrl?: string;
  stop(): Promise<void>;
}

/** Starts the given roles in this process and stops them cleanly on SIGTERM or SIGINT. */
export async function serve(config: Config, roles: Role[], opts: ServeOptions = {}): Promise<Running> {
  const deps = await createDeps(config, opts);
  const stops: (() => Promise<void>)[] = [];
  const running: Running = {
    deps,
    async stop() {
      // Reverse order: stop taking requests first, then background work, then the database.
      for (const stop of stops.splice(0).reverse()) {
        await stop().catch((err: unknown) => deps.log.error({ err }, 'stopping a role failed'));
      }
      // Closes the pool and the listening connection: nothing keeps the process alive after this.
      await closeDeps(deps);
    },
  };

  const started = startRoles({ config, roles, opts, deps, running, stops });
  // From the start: a SIGTERM that comes while the roles start (a deploy replacing this process
  // at once) waits for them, then stops them. Node's default would end the process mid-start and
  // leave, say, the sandbox's test workspace mounted.
  if (opts.handleSignals !== false) stopOnSignals(config, running, started);
  try {
    await started;
  } catch (err) {
    // A role that cannot start (a port in use) stops those already started: the process can exit.
    await running.stop().catch(() => undefined);
    throw err;
  }

  deps.log.info({ roles, api: running.apiUrl, edge: running.edgeUrl }, 'slipway started');
  if (opts.banner !== false) printBanner(config, roles, running);
  return running;
}

/** What starting the roles shares: the process's deps, what it runs, and how to stop it. */
interface Starting {
  config: Config;
  roles: Role[];
  opts: ServeOptions;
  deps: Deps;
  running: Running;
  stops: (() => Promise<void>)[];
}

/** Starts each role asked for, in order: metrics, edge, worker, API, bot. */
async function startRoles(s: Starting): Promise<void> {
  const { config, roles, opts, deps, running, stops } = s;
  // Made once, and only by a process that runs tenant code (a worker or an edge).
  let made: Promise<Sandbox> | undefined;
  const sandbox = () => (made ??= createServiceSandbox(config, deps.log));

  if (config.metrics.enabled) {
    // First, so a port conflict stops the start before any role runs; stopped last.
    const ops = await startOpsMetrics(deps, roles);
    if (ops.url) running.metricsUrl = ops.url;
    stops.push(() => ops.stop());
  }
  if (roles.includes('edge')) {
    const edge = await startEdge(deps, await sandbox(), opts.edge);
    running.edge = edge;
    running.edgeUrl = `http://localhost:${edge.port}`;
    stops.push(() => edge.stop());
    // An edge that starts serving before it listens could miss an alias switch until its cache
    // expires; wait (briefly) for the listening connection.
    await Promise.race([deps.store.notifier.ready(), new Promise((r) => setTimeout(r, 5000).unref())]);
  }
  if (roles.includes('worker')) {
    const worker = await startWorkerRole(deps, await sandbox(), opts.jobs, { lookup: opts.lookup });
    stops.push(() => worker.stop());
  }
  if (roles.includes('api')) await startApi(s);
  if (roles.includes('bot')) {
    // After the API, so the bot can talk to this process's API; stopped before it.
    const bot = await startBotRole({
      log: deps.log,
      shutdownGraceMs: config.shutdownGraceMs,
      ...(running.apiUrl ? { apiUrl: running.apiUrl } : {}),
    });
    running.botUrl = bot.url;
    stops.push(() => bot.stop());
  }
}

async function startApi({ config, deps, running, stops }: Starting): Promise<void> {
  const app = buildApp(deps);
  await app.listen({ port: config.port, host: config.host }).catch((err: unknown) => {
    throw listenError(err, config.port, 'the API', 'PORT');
  });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  running.app = app;
  running.apiUrl = `http://localhost:${port}`;
  deps.urls.listening(port);
  stops.push(() => app.close());
}

function printBanner(config: Config, roles: Role[], running: Running): void {
  const lines = [`\nSlipway is running (${roles.join(', ')}).`];
  if (running.apiUrl) lines.push(`  API:  ${running.apiUrl}   (reference: ${running.apiUrl}/docs)`);
  if (running.edgeUrl)
    lines.push(`  Edge: ${running.edgeUrl}   (deployments at ${running.deps.urls.forHost('<name>')})`);
  lines.push(`  Data: ${config.dataDir} (${config.databaseUrl ? 'PostgreSQL' : 'SQLite'})`);
  if (running.botUrl) lines.push(`  GitHub App: ${running.botUrl}/api/github/webhooks`);
  if (running.metricsUrl) lines.push(`  Metrics: ${running.metricsUrl}`);
  if (running.apiUrl) lines.push(`  Get a token: ${tokenCommand(config)}`);
  process.stderr.write(`${lines.join('\n')}\n\n`);
}

/**
 * On SIGTERM or SIGINT, stops what runs and exits 0, after the start when one is under way. A
 * start that fails is left to stop what it started and report why (serve's caller exits non-zero).
 */
function stopOnSignals(config: Config, running: Running, started: Promise<void>): void {
  const { deps } = running;
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.log.info({ signal }, 'shutting down');
    // Stop order: the API stops taking requests and finishes those in flight, the worker stops
    // claiming and releases unfinished jobs after its grace period, then the pools close. A stop
    // that hangs anyway (a stuck connection) must not keep a replaced process around forever.
    const limitMs = config.shutdownGraceMs + 20_000;
    setTimeout(() => {
      deps.log.error(`shutdown took longer than ${Math.round(limitMs / 1000)} s; exiting`);
      process.exit(1);
    }, limitMs).unref();
    started.then(
      () =>
        running.stop().then(
          () => process.exit(0),
          (err: unknown) => {
            deps.log.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        ),
      () => undefined,
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
