import type { Logger } from 'pino';
import type { FetchLike, SlipwayClient } from '../api/client/index.ts';
import { createKeyedLock, type KeyedLock } from './lib/keyed-lock.ts';
import { LRUCache } from 'lru-cache';
import { createSeenIds, type SeenIds } from './lib/seen-ids.ts';
import type { DeploymentTag } from './lib/tag.ts';
import { createTasks, type Tasks } from './lib/tasks.ts';
import { createProjectResolver, type ProjectResolver } from './service/resolve-project.ts';
import { createWebhookRegistrar, type WebhookRegistrar } from './service/ensure-webhook.ts';
import type { BotSettings } from './settings.ts';
import { createSlipwayClient } from './slipway.ts';

/** Everything the bot's handlers use besides GitHub, injected so tests can set the clock. */
export interface BotServices {
  slipway: SlipwayClient;
  settings: Pick<BotSettings, 'botUrl' | 'serviceWebhookSecret' | 'previousServiceWebhookSecret'>;
  now: () => Date;
  log: Logger;
  /** Serialises the work on one pull request. */
  locks: KeyedLock;
  /** Work done after an HTTP answer. */
  tasks: Tasks;
  /** Service delivery ids already received. */
  seen: SeenIds;
  projects: ProjectResolver;
  webhooks: WebhookRegistrar;
  /** Tags of deployments this process started, to spare a read when their events arrive. */
  tags: LRUCache<string, DeploymentTag>;
}

export interface ServiceOptions {
  log: Logger;
  now?: () => Date;
  fetch?: FetchLike;
  /** Use this client instead of one built from the settings. */
  slipway?: SlipwayClient;
}

export function createBotServices(
  settings: Pick<
    BotSettings,
    'apiUrl' | 'apiToken' | 'botUrl' | 'serviceWebhookSecret' | 'previousServiceWebhookSecret'
  >,
  opts: ServiceOptions,
): BotServices {
  const now = opts.now ?? (() => new Date());
  const slipway = opts.slipway ?? createSlipwayClient(settings, opts.fetch);
  return {
    slipway,
    settings: {
      botUrl: settings.botUrl,
      serviceWebhookSecret: settings.serviceWebhookSecret,
      previousServiceWebhookSecret: settings.previousServiceWebhookSecret,
    },
    now,
    log: opts.log,
    locks: createKeyedLock(),
    tasks: createTasks(opts.log),
    seen: createSeenIds(() => now().getTime()),
    projects: createProjectResolver(slipway, () => now().getTime()),
    webhooks: createWebhookRegistrar(slipway, settings),
    tags: new LRUCache({ max: 10_000 }),
  };
}
