import type { ApplicationFunction } from 'probot';
import { createSlipwayApp } from './app.ts';
import { createBotServices } from './services.ts';
import { loadBotSettings } from './settings.ts';

/**
 * The Slipway GitHub App for Probot (`probot run ./bot/index.ts`), configured from the
 * environment. `slipway serve` runs it through server/roles/bot.ts instead.
 */
const slipwayBot: ApplicationFunction = (app, options) =>
  createSlipwayApp(createBotServices(loadBotSettings(process.env), { log: app.log }))(app, options);

export default slipwayBot;
