import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger, logFormat } from '../../server/core/log-format.ts';
import { tokenCommand } from '../../server/token-command.ts';

describe('start-up messages', () => {
  it('prints the token command that reaches the same database', () => {
    expect(
      tokenCommand({ dataDir: resolve('/srv/app', '.slipway'), databaseUrl: undefined }, '/srv/app'),
    ).toBe('npx slipway token create --email you@example.com --name laptop');
    expect(tokenCommand({ dataDir: '/var/lib/slipway', databaseUrl: undefined }, '/srv/app')).toBe(
      'SLIPWAY_DATA_DIR=/var/lib/slipway npx slipway token create --email you@example.com --name laptop',
    );
    expect(
      tokenCommand({ dataDir: '/x', databaseUrl: 'postgres://app:s3cret@db:5432/slipway' }, '/srv/app'),
    ).toBe(
      "DATABASE_URL='postgres://app:PASSWORD@db:5432/slipway' npx slipway token create --email you@example.com --name laptop",
    );
  });

  it('logs readably on a terminal and as JSON elsewhere, unless told', () => {
    expect(logFormat(undefined, true)).toBe('pretty');
    expect(logFormat(undefined, false)).toBe('json');
    expect(logFormat('json', true)).toBe('json');
    expect(logFormat('pretty', false)).toBe('pretty');
    expect(createLogger('info', 'json').level).toBe('info');
  });
});
