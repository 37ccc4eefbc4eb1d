import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../server/platform/config.ts';
import { ROLES } from '../../server/serve.ts';

interface Service {
  command?: string[];
  ports?: string[];
  profiles?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  image?: string;
  build?: { dockerfile: string };
}

const compose = parse(readFileSync('deploy/compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const slipway = Object.entries(compose.services).filter(([name]) => name !== 'postgres');

describe('deploy/compose.yml', () => {
  it('runs 2 API, 2 worker and 1 edge process beside one PostgreSQL, and the GitHub App on request', () => {
    const roles = slipway.map(([, s]) => s.command?.slice(2).join(' '));
    expect(roles.sort()).toEqual(['api', 'api', 'bot', 'edge', 'worker', 'worker']);
    expect(compose.services.bot?.profiles).toEqual(['github']);
    for (const [, s] of slipway) {
      expect(s.command?.slice(0, 2)).toEqual(['serve', '--role']);
      expect(ROLES).toContain(s.command![2]);
    }
    expect(compose.services.postgres?.image).toMatch(/^postgres:1[5-9]/);
  });

  it('gives every process the same database, key and artifacts volume, in a valid configuration', () => {
    for (const [name, s] of slipway) {
      // As compose interpolates `${VAR:-default}` with nothing set: the default.
      const given = Object.fromEntries(
        Object.entries(s.environment!).map(([k, v]) => [
          k,
          String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1'),
        ]),
      );
      const env: Record<string, string> = {
        ...given,
        SLIPWAY_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      };
      expect(env.DATABASE_URL, name).toBe('postgres://slipway:slipway@postgres:5432/slipway');
      expect(s.volumes, name).toContain('artifacts:/srv/artifacts');
      expect(s.build?.dockerfile, name).toBe('deploy/Dockerfile');
      const config = loadConfig({
        ...env,
        SLIPWAY_DOMAIN: 'example.com',
        SLIPWAY_DATA_DIR: '/tmp/slipway-compose',
      });
      expect(config.artifactsDir).toBe('/srv/artifacts');
      expect(config.dbPoolSize).toBe(10);
    }
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(['pgdata', 'artifacts']));
  });

  it('the Dockerfile runs the CLI, forwards SIGTERM to node and keeps data on volumes', () => {
    const dockerfile = readFileSync('deploy/Dockerfile', 'utf8');
    expect(dockerfile).toMatch(/^FROM node:20/m);
    expect(dockerfile).toContain('ENTRYPOINT ["node", "bin/slipway.js"]');
    expect(dockerfile).toContain('STOPSIGNAL SIGTERM');
    expect(dockerfile).toMatch(/VOLUME \["\/var\/lib\/slipway", "\/srv\/artifacts"\]/);
  });

  it('maps each host port once, and the bot to its own port 3002', () => {
    const hostPorts = Object.entries(compose.services).flatMap(([name, s]) =>
      (s.ports ?? []).map((p) => ({ name, host: p.split(':')[0], container: p.split(':')[1] })),
    );
    const seen = hostPorts.map((p) => p.host);
    expect(new Set(seen).size, JSON.stringify(hostPorts)).toBe(seen.length);
    expect(hostPorts.filter((p) => p.host === '3002')).toEqual([
      { name: 'bot', host: '3002', container: '3002' },
    ]);
    expect(readFileSync('deploy/Dockerfile', 'utf8')).toMatch(/^EXPOSE 3000 3001 3002$/m);
  });

  it('wires the bot to an API process and the GitHub App settings', () => {
    const env = compose.services.bot!.environment!;
    expect(env.SLIPWAY_API_URL).toBe('http://api1:3000');
    expect(env.BOT_PORT).toBe('3002');
    for (const name of [
      'APP_ID',
      'PRIVATE_KEY',
      'WEBHOOK_SECRET',
      'SLIPWAY_API_TOKEN',
      'SLIPWAY_WEBHOOK_SECRET',
      'SLIPWAY_BOT_URL',
    ]) {
      expect(Object.keys(env), name).toContain(name);
    }
    // The database and key of every other process, so the durable queue and the API are the same.
    expect(env.DATABASE_URL).toBe('postgres://slipway:slipway@postgres:5432/slipway');
  });
});
