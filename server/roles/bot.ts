import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { createNodeMiddleware, Probot, ProbotOctokit } from 'probot';
import type { FetchLike } from '../../api/client/index.ts';
import { verify as verifySignature } from '../../api/signature.ts';
import { listenError } from '../core/startup-error.ts';
import { createSlipwayApp } from '../../bot/app.ts';
import { createBotServices } from '../../bot/services.ts';
import { createEventProcessor } from '../../bot/events/processor.ts';
import { createReceiver } from '../../bot/events/receiver.ts';
import { BotSettingsError, botConfigured, loadBotSettings } from '../../bot/settings.ts';

/** Where GitHub posts the App's webhooks. */
export const GITHUB_WEBHOOK_PATH = '/api/github/webhooks';

export interface BotRoleOptions {
  /** Environment to read the settings from; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The process's logger; the bot logs as its child `{ role: 'bot' }`. */
  log?: Logger;
  /** Where this process's API listens, used when SLIPWAY_API_URL is unset. */
  apiUrl?: string;
  /** The Octokit class (tests turn retries and throttling off). */
  Octokit?: typeof ProbotOctokit;
  /** The bot's clock (tests). */
  now?: () => Date;
  /** The `fetch` of the Slipway client (tests). */
  fetch?: FetchLike;
  /** How long a stopping bot lets GitHub events in progress finish before handing them back. */
  shutdownGraceMs?: number;
  /** How long a claim on a GitHub event holds (tests shorten it). */
  eventLeaseMs?: number;
  /** How often the queue is polled for retries and other processes' events. */
  eventPollMs?: number;
}

export interface BotRole {
  /** Where the bot's HTTP server listens, e.g. `http://localhost:3002`. */
  url: string;
  /** The Probot instance (`probot.receive(...)` feeds it an event without HTTP). */
  probot: Probot;
  /** Resolves once the GitHub events taken so far and the work started by service webhooks have finished. */
  idle(): Promise<void>;
  /** Stops taking requests, then waits for work in flight. */
  stop(): Promise<void>;
}

export { botConfigured };

/**
 * The bot role: the Slipway GitHub App (Probot) on its own HTTP server, BOT_PORT (default 3002).
 * GitHub's webhooks arrive at `/api/github/webhooks`, the service's at `/slipway/webhooks`;
 * `GET /healthz` answers for load balancers. Settings come from the environment: APP_ID,
 * PRIVATE_KEY or PRIVATE_KEY_PATH, WEBHOOK_SECRET, SLIPWAY_API_TOKEN, SLIPWAY_WEBHOOK_SECRET,
 * and optionally SLIPWAY_API_URL, SLIPWAY_BOT_URL, BOT_PORT, BOT_HOST, GITHUB_API_URL.
 */
export async function startBotRole(options: BotRoleOptions = {}): Promise<BotRole> {
  const settings = loadBotSettings(options.env ?? process.env, {
    ...(options.apiUrl ? { apiUrl: options.apiUrl } : {}),
  });
  const log = (options.log ?? pino({ level: 'info' })).child({ role: 'bot' });
  const probot = new Probot({
    appId: settings.appId,
    privateKey: settings.privateKey,
    secret: settings.webhookSecret,
    log,
    Octokit: options.Octokit ?? ProbotOctokit,
    ...(settings.githubApiUrl ? { baseUrl: settings.githubApiUrl } : {}),
  });
  await checkAppCredentials(probot, settings, log);
  const services = createBotServices(settings, {
    log,
    ...(options.now ? { now: options.now } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const middleware = await createNodeMiddleware(createSlipwayApp(services), {
    probot,
    webhooksPath: GITHUB_WEBHOOK_PATH,
  });
  const { processor, receive } = githubEvents(probot, services, settings, log, options);
  const server = createServer(botRequests(receive, middleware, log));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(listenError(err, settings.port, 'the GitHub App', 'BOT_PORT')));
    server.listen(settings.port, settings.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://localhost:${port}`;
  log.info({ url, botUrl: settings.botUrl, api: settings.apiUrl }, 'slipway bot started');
  // Events stored before a restart (or by another bot process) are picked up now.
  processor.wake();
  return {
    url,
    probot,
    async idle() {
      await processor.idle();
      await services.tasks.idle();
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      // Everything within the grace: what runs after it dies with the process.
      const grace = options.shutdownGraceMs ?? 10_000;
      const until = Date.now() + grace;
      await processor.stop(grace);
      await Promise.race([
        services.tasks.idle(),
        new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())).unref()),
      ]);
    },
  };
}

/**
 * GitHub's deliveries, stored by the receiver and processed from the service's queue; a signature
 * is checked against the App's webhook secret (during a rotation, the previous one too).
 */
function githubEvents(
  probot: Probot,
  services: ReturnType<typeof createBotServices>,
  settings: { previousWebhookSecret?: string | undefined },
  log: Logger,
  options: BotRoleOptions,
) {
  const verify = async (body: string, signature: string) =>
    (await probot.webhooks.verify(body, signature)) ||
    (settings.previousWebhookSecret !== undefined &&
      verifySignature(settings.previousWebhookSecret, body, signature));
  const handle = (event: { id: string; name: string; payload: unknown }) => probot.receive(event as never);
  const processor = createEventProcessor({
    slipway: services.slipway,
    verify,
    handle,
    log,
    ...(options.eventLeaseMs ? { leaseMs: options.eventLeaseMs } : {}),
    ...(options.eventPollMs ? { pollMs: options.eventPollMs } : {}),
  });
  const receive = createReceiver({
    slipway: services.slipway,
    verify,
    stored: processor.wake,
    handleNow: handle,
    log,
    now: services.now,
  });
  return { processor, receive };
}

/** The bot's HTTP requests: GitHub's deliveries, `/healthz`, and Probot's middleware for the rest. */
function botRequests(
  receive: ReturnType<typeof createReceiver>,
  middleware: Awaited<ReturnType<typeof createNodeMiddleware>>,
  log: Logger,
): RequestListener {
  return (req, res) => {
    // GitHub's deliveries: stored and answered at once, processed from the service's queue.
    if (req.method === 'POST' && req.url?.split('?')[0] === GITHUB_WEBHOOK_PATH) {
      void receive(req, res).catch((err: unknown) => {
        log.error({ err }, 'GitHub webhook receiver failed');
        if (!res.headersSent) res.writeHead(500).end();
      });
      return;
    }
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    void middleware(req, res, () => {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    });
  };
}

/**
 * Asks GitHub who the App is (`GET /app`, signed with a JWT of APP_ID and PRIVATE_KEY), so that
 * wrong credentials stop the start with a message naming them instead of failing at the first
 * webhook. When GitHub cannot be reached at all the bot starts anyway, with a warning.
 */
async function checkAppCredentials(
  probot: Probot,
  settings: { appId: string; githubApiUrl: string | undefined },
  log: Logger,
): Promise<void> {
  const where = settings.githubApiUrl ?? 'https://api.github.com';
  try {
    const octokit = await probot.auth();
    const { data } = await octokit.request('GET /app');
    log.info({ app: data?.slug, id: data?.id }, 'GitHub App credentials checked');
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 401) {
      throw new BotSettingsError(
        `GitHub refused the App's credentials (GET ${where}/app answered 401): APP_ID (${settings.appId}) and PRIVATE_KEY must belong to the same GitHub App; check both in the App's settings`,
      );
    }
    if (status === 404) {
      throw new BotSettingsError(
        `GitHub has no App with APP_ID ${settings.appId} for this PRIVATE_KEY (GET ${where}/app answered 404): check APP_ID in the App's settings (About > App ID)`,
      );
    }
    if (status !== undefined) throw err;
    log.warn({ err, github: where }, 'could not reach GitHub to check the App credentials; starting anyway');
  }
}
