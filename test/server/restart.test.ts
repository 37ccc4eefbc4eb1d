import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';

describe('restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slipway-restart-'));
  // No SLIPWAY_ENCRYPTION_KEY: the first start generates one into the data dir, the second must reuse it.
  const env = { SLIPWAY_ENCRYPTION_KEY: '' };
  let running: TestApp | undefined;
  afterAll(async () => {
    await running?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps everything written through the API, and the same token works', async () => {
    running = await createTestApp({ dataDir, env });
    const first = running;
    const alice = await first.user('alice@example.com');
    const org = await first.call(alice, 'POST', '/v1/organizations', { name: 'durable', plan: 'pro' });
    expect(org.status).toBe(201);
    const orgId = org.body.data.id as string;
    expect(
      (
        await first.call(alice, 'POST', `/v1/organizations/${orgId}/members/invite`, {
          email: 'later@example.com',
          role: 'admin',
        })
      ).status,
    ).toBe(201);
    const project = await first.call(alice, 'POST', '/v1/projects', {
      name: 'site',
      repositoryUrl: 'https://example.com/site.git',
      organizationId: orgId,
    });
    expect(project.status).toBe(201);
    const projectId = project.body.data.id as string;
    const envUrl = `/v1/projects/${projectId}/env`;
    expect(
      (await first.call(alice, 'POST', envUrl, { key: 'DB_PASSWORD', value: 's3cret', encrypted: true }))
        .status,
    ).toBe(201);
    const second = await first.call(alice, 'POST', '/v1/user/tokens', { name: 'second' });
    expect(second.status).toBe(201);
    const revoked = await first.call(alice, 'POST', '/v1/user/tokens', { name: 'revoked' });
    expect((await first.call(alice, 'DELETE', `/v1/user/tokens/${revoked.body.data.id}`)).status).toBe(200);
    const before = await first.call(alice, 'GET', `/v1/organizations/${orgId}`);
    expect(existsSync(join(dataDir, 'encryption.key'))).toBe(true);
    await first.close();
    running = undefined;

    running = await createTestApp({ dataDir, env });
    const again = running;
    const me = await again.call(alice.token, 'GET', '/v1/user');
    expect(me.status).toBe(200);
    expect(me.body.data.organizations.map((o: { name: string }) => o.name).sort()).toEqual([
      'alice',
      'durable',
    ]);
    expect((await again.call(second.body.data.token, 'GET', '/v1/user')).status).toBe(200);
    expect((await again.call(revoked.body.data.token, 'GET', '/v1/user')).status).toBe(401);
    const after = await again.call(alice, 'GET', `/v1/organizations/${orgId}`);
    expect(after.body.data).toEqual(before.body.data);
    expect(after.body.data).toMatchObject({ plan: 'pro', projectCount: 1, memberCount: 1 });
    const members = await again.call(alice, 'GET', `/v1/organizations/${orgId}/members`);
    expect(members.body.data.map((m: { email: string; status: string }) => `${m.email}:${m.status}`)).toEqual(
      ['later@example.com:invited', 'alice@example.com:active'],
    );
    expect((await again.call(alice, 'GET', `/v1/projects/${projectId}`)).body.data.name).toBe('site');
    // The secret still decrypts: the generated key was kept, not replaced.
    const exported = await again.call(alice, 'GET', `${envUrl}/export?format=json`);
    expect(exported.status).toBe(200);
    expect(exported.body.data).toEqual({ DB_PASSWORD: 's3cret' });
    // The invitation still takes effect for a user created after the restart.
    const later = await again.user('later@example.com');
    expect((await again.call(later, 'GET', `/v1/organizations/${orgId}`)).body.data.role).toBe('admin');
  });
});
