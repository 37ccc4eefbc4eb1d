import { accessSync, constants, mkdirSync } from 'node:fs';
import { EnvSchema } from './config/env-schema.ts';
import { toConfig } from './config/to-config.ts';
import { ConfigError } from '../core/config-error.ts';
import { parseObjectStorage } from './storage/object-storage-url.ts';

// The settings' pieces, each in a file of its own under config/: the environment's schema
// (env-schema.ts), the GitHub App and sign-in (github.ts), and the typed config made of it in
// sections (to-config.ts and the *-settings.ts files it puts together).
export { parseDuration, parseSize } from './config/env-schema.ts';

export type Config = ReturnType<typeof toConfig>;
export type SandboxConfig = Config['sandbox'];

/** Reads the environment; a bad value throws a ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0] ?? '');
      return i.message.startsWith(name) ? i.message : `${name}: ${i.message}`;
    });
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const storage = parseObjectStorage(parsed.data);
  if (typeof storage === 'string') throw new ConfigError(`Invalid configuration:\n  ${storage}`);
  return toConfig(parsed.data);
}

/** Creates the data dir if needed and checks that it can be written. */
export function ensureDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.R_OK | constants.W_OK);
  } catch (err) {
    throw new ConfigError(
      `SLIPWAY_DATA_DIR: cannot use "${dir}" as the data directory (${(err as Error).message}). ` +
        'Point SLIPWAY_DATA_DIR at a directory this user can read and write.',
    );
  }
}
