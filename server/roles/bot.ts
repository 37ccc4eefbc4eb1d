import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { createNodeMiddleware, Probot, ProbotOctokit } from 'probot';
import type { FetchLike } from '../../api/client/index.ts';
import { createSlipwayApp } from '../../bot/app.ts';
import { createBotServices } from '../../bot/services.ts';
import { botConfigured, loadBotSettings } from '../../bot/settings.ts';

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
}

export interface BotRole {
  /** Where the bot's HTTP server listens, e.g. `http://localhost:3002`. */
  url: string;
  /** The Probot instance (`probot.receive(...)` feeds it an event without HTTP). */
  probot: Probot;
  /** Resolves once the work started by service webhooks has finished. */
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
  const services = createBotServices(settings, {
    log,
    ...(options.now ? { now: options.now } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const middleware = await createNodeMiddleware(createSlipwayApp(services), {
    probot,
    webhooksPath: GITHUB_WEBHOOK_PATH,
  });
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    void middleware(req, res, () => {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://localhost:${port}`;
  log.info({ url, botUrl: settings.botUrl, api: settings.apiUrl }, 'slipway bot started');
  return {
    url,
    probot,
    idle: () => services.tasks.idle(),
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await services.tasks.idle();
    },
  };
}
