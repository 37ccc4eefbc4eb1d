/** A setting of the environment that is missing or bad; its message names the variable (server/platform/config.ts). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
