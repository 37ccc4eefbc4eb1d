import { createClient, type FetchLike, type SlipwayClient } from '../api/client/index.ts';
import type { BotSettings } from './settings.ts';

/**
 * The bot's client of the Slipway API. It answers GitHub within GitHub's 10-second webhook
 * deadline, so it retries little and never sits out a long `Retry-After`: a refused call shows
 * up on the check instead.
 */
export function createSlipwayClient(
  settings: Pick<BotSettings, 'apiUrl' | 'apiToken'>,
  fetch?: FetchLike,
): SlipwayClient {
  return createClient({
    baseUrl: settings.apiUrl,
    token: settings.apiToken,
    userAgent: 'slipway-bot/0.1.0',
    baseUrlName: 'SLIPWAY_API_URL',
    retries: 2,
    baseDelayMs: 200,
    maxRetryAfterMs: 3000,
    timeoutMs: 8000,
    ...(fetch ? { fetch } : {}),
  });
}
