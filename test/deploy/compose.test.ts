import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../server/config.ts';
import { ROLES } from '../../server/serve.ts';

interface Service {
  command?: string[];
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
  it('runs 2 API, 2 worker and 1 edge process beside one PostgreSQL', () => {
    const roles = slipway.map(([, s]) => s.command?.slice(2).join(' '));
    expect(roles.sort()).toEqual(['api', 'api', 'edge', 'worker', 'worker']);
    for (const [, s] of slipway) {
      expect(s.command?.slice(0, 2)).toEqual(['serve', '--role']);
      expect(ROLES).toContain(s.command![2]);
    }
    expect(compose.services.postgres?.image).toMatch(/^postgres:1[5-9]/);
  });

  it('gives every process the same database, key and artifacts volume, in a valid configuration', () => {
    for (const [name, s] of slipway) {
      const env: Record<string, string> = {
        ...s.environment!,
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
});
