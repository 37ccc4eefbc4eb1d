import { resolve } from 'node:path';
import type { Config } from './platform/config.ts';

/** A PostgreSQL URL with its password left out, for printing. */
export function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = 'PASSWORD';
    return u.toString();
  } catch {
    return 'postgres://...';
  }
}

/**
 * The exact command that makes a token for this service: with the data directory (or database)
 * it uses, when that is not the default, so the token lands in the same database.
 */
export function tokenCommand(config: Pick<Config, 'dataDir' | 'databaseUrl'>, cwd = process.cwd()): string {
  const env: string[] = [];
  if (config.databaseUrl) env.push(`DATABASE_URL='${withoutPassword(config.databaseUrl)}'`);
  else if (config.dataDir !== resolve(cwd, '.slipway')) env.push(`SLIPWAY_DATA_DIR=${config.dataDir}`);
  return [...env, 'npx slipway token create --email you@example.com --name laptop'].join(' ');
}
