import { resolve } from 'node:path';
import { buildSettings } from './build-settings.ts';
import { edgeSettings } from './edge-settings.ts';
import type { Env } from './env-schema.ts';
import { monitoringSettings } from './monitoring-settings.ts';
import { sandboxSettings } from './sandbox-settings.ts';
import { serviceSettings } from './service-settings.ts';

/** The typed config, section by section (in the order its keys always had). */
export function toConfig(env: Env) {
  const dataDir = resolve(env.SLIPWAY_DATA_DIR);
  return {
    ...serviceSettings(env, dataDir),
    ...buildSettings(env, dataDir),
    ...edgeSettings(env),
    ...monitoringSettings(env),
    ...sandboxSettings(env),
  };
}
