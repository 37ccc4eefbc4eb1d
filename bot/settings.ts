import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { normalisePrivateKey } from '../api/github-app-key.ts';

const httpUrl = (name: string) =>
  z
    .string()
    .refine((v) => /^https?:\/\/[^\s]+$/.test(v), `${name} must be an http(s) URL`)
    .transform((v) => v.replace(/\/+$/, ''));

const BotEnv = z.object({
  APP_ID: z.string().regex(/^\d+$/, 'APP_ID must be the numeric id of the GitHub App'),
  PRIVATE_KEY: z.string().optional(),
  PRIVATE_KEY_PATH: z.string().optional(),
  WEBHOOK_SECRET: z.string().min(1, 'WEBHOOK_SECRET is required'),
  /** The App's previous webhook secret, still accepted while it is being rotated. */
  WEBHOOK_SECRET_PREVIOUS: z.string().min(1).optional(),
  SLIPWAY_API_URL: httpUrl('SLIPWAY_API_URL').optional(),
  SLIPWAY_API_TOKEN: z
    .string()
    .min(1, 'SLIPWAY_API_TOKEN is required: create one with `slipway token create`'),
  SLIPWAY_WEBHOOK_SECRET: z
    .string()
    .min(16, 'SLIPWAY_WEBHOOK_SECRET must be at least 16 characters (the service signs webhooks with it)')
    .max(256, 'SLIPWAY_WEBHOOK_SECRET must be at most 256 characters'),
  /** The previous service webhook secret, still accepted while it is being rotated. */
  SLIPWAY_WEBHOOK_SECRET_PREVIOUS: z.string().min(16).max(256).optional(),
  SLIPWAY_BOT_URL: httpUrl('SLIPWAY_BOT_URL').optional(),
  BOT_PORT: z
    .string()
    .regex(/^\d+$/, 'BOT_PORT must be a whole number from 0 to 65535')
    .transform(Number)
    .refine((n) => n <= 65535, 'BOT_PORT must be a whole number from 0 to 65535')
    .default(3002),
  BOT_HOST: z.string().min(1).optional(),
  HOST: z.string().min(1).optional(),
  GITHUB_API_URL: httpUrl('GITHUB_API_URL').optional(),
});

/** The bot's settings, read from the environment. */
export interface BotSettings {
  /** The GitHub App's id. */
  appId: string;
  /** The GitHub App's private key (PEM). */
  privateKey: string;
  /** Secret GitHub signs the App's webhooks with. */
  webhookSecret: string;
  /** The App's previous webhook secret, accepted too during a rotation. */
  previousWebhookSecret: string | undefined;
  /** Root of the Slipway API. */
  apiUrl: string;
  /** Token the bot calls the Slipway API with. */
  apiToken: string;
  /** Secret of the service webhook the bot registers and verifies. */
  serviceWebhookSecret: string;
  /** The previous service webhook secret, accepted too during a rotation. */
  previousServiceWebhookSecret: string | undefined;
  /** The bot's public base URL; the service posts to `<botUrl>/slipway/webhooks`. */
  botUrl: string;
  /** Port and interface the bot's HTTP server listens on. */
  port: number;
  host: string;
  /** GitHub's REST API root (GitHub Enterprise Server, tests); default api.github.com. */
  githubApiUrl: string | undefined;
}

/** What each required variable is, for the message when it is missing. */
const MISSING: Record<string, string> = {
  APP_ID: "the GitHub App's numeric id, from the App's settings page (About > App ID)",
  WEBHOOK_SECRET: "the GitHub App's webhook secret, as entered in the App's settings (Webhook secret)",
  SLIPWAY_API_TOKEN:
    'the Slipway API token the bot acts with: create one with `slipway token create --email <bot user>`',
  SLIPWAY_WEBHOOK_SECRET:
    'a secret of 16 to 256 characters the service signs its webhooks to the bot with: make one with `openssl rand -hex 24`',
};

export class BotSettingsError extends Error {
  override name = 'BotSettingsError';
}

/** True when the GitHub App's credentials are set, so `slipway serve` starts the bot role. */
export function botConfigured(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.APP_ID && (env.PRIVATE_KEY || env.PRIVATE_KEY_PATH) && env.WEBHOOK_SECRET);
}

/** The App's key (api/github-app-key.ts), its error as a BotSettingsError. */
function privateKeyOf(value: string): string {
  try {
    return normalisePrivateKey(value);
  } catch (err) {
    throw new BotSettingsError((err as Error).message);
  }
}

/**
 * Reads the bot's settings from the environment. `defaults.apiUrl` is where the API of this
 * process listens, used when SLIPWAY_API_URL is unset. A bad value throws a BotSettingsError
 * naming the variable.
 */
export function loadBotSettings(env: NodeJS.ProcessEnv, defaults: { apiUrl?: string } = {}): BotSettings {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = BotEnv.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0] ?? '');
      if (cleaned[name] === undefined && MISSING[name]) return `${name} is not set: ${MISSING[name]}`;
      return i.message.startsWith(name) ? i.message : `${name}: ${i.message}`;
    });
    throw new BotSettingsError(`Invalid bot configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  let key = e.PRIVATE_KEY;
  if (!key && e.PRIVATE_KEY_PATH) {
    try {
      key = readFileSync(e.PRIVATE_KEY_PATH, 'utf8');
    } catch (err) {
      throw new BotSettingsError(
        `PRIVATE_KEY_PATH: cannot read "${e.PRIVATE_KEY_PATH}" (${(err as Error).message})`,
      );
    }
  }
  if (!key) {
    throw new BotSettingsError(
      "PRIVATE_KEY is not set: the GitHub App's private key, the PEM text (or set PRIVATE_KEY_PATH to the .pem file GitHub gave you)",
    );
  }
  return {
    appId: e.APP_ID,
    privateKey: privateKeyOf(key),
    webhookSecret: e.WEBHOOK_SECRET,
    previousWebhookSecret: e.WEBHOOK_SECRET_PREVIOUS,
    apiUrl: e.SLIPWAY_API_URL ?? defaults.apiUrl ?? 'http://127.0.0.1:3000',
    apiToken: e.SLIPWAY_API_TOKEN,
    serviceWebhookSecret: e.SLIPWAY_WEBHOOK_SECRET,
    previousServiceWebhookSecret: e.SLIPWAY_WEBHOOK_SECRET_PREVIOUS,
    botUrl: e.SLIPWAY_BOT_URL ?? `http://localhost:${e.BOT_PORT}`,
    port: e.BOT_PORT,
    host: e.BOT_HOST ?? e.HOST ?? '0.0.0.0',
    githubApiUrl: e.GITHUB_API_URL,
  };
}
