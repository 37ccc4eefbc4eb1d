import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';

/** A project's build settings through the API: set, read, changed, cleared, and refused when bad. */
describe('project build settings', () => {
  let t: TestApp;
  let alice: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
  });
  afterAll(() => t.close());

  const create = (body: Record<string, unknown>) =>
    t.call(alice, 'POST', '/v1/projects', {
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
      ...body,
    });

  it('are null (detected) by default, set at creation normalized, changed and cleared by PATCH', async () => {
    const plain = await create({ name: 'plain' });
    expect(plain.body.data).toMatchObject({
      installCommand: null,
      buildCommand: null,
      outputDirectory: null,
      rootDirectory: null,
    });
    const res = await create({
      name: 'mono',
      rootDirectory: './apps/web/',
      outputDirectory: 'dist/',
      installCommand: 'pnpm install --frozen-lockfile',
      buildCommand: '',
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      rootDirectory: 'apps/web',
      outputDirectory: 'dist',
      installCommand: 'pnpm install --frozen-lockfile',
      buildCommand: '',
    });
    const id = res.body.data.id;
    const patched = await t.call(alice, 'PATCH', `/v1/projects/${id}`, {
      buildCommand: 'pnpm build',
      rootDirectory: null,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      rootDirectory: null,
      outputDirectory: 'dist',
      installCommand: 'pnpm install --frozen-lockfile',
      buildCommand: 'pnpm build',
    });
    const root = await t.call(alice, 'PATCH', `/v1/projects/${id}`, { rootDirectory: '.' });
    expect(root.body.data.rootDirectory).toBeNull();
    expect((await t.call(alice, 'GET', `/v1/projects/${id}`)).body.data.buildCommand).toBe('pnpm build');
  });

  it('refuses paths that leave the repository, naming each field, and changes nothing', async () => {
    const res = await create({ name: 'escape', rootDirectory: '../other', outputDirectory: '/etc' });
    expect(res.status).toBe(400);
    const details = res.body.error.details.map(
      (d: { path: string; message: string }) => `${d.path}: ${d.message}`,
    );
    expect(details.sort()).toEqual([
      'outputDirectory: must be relative to the repository, such as apps/web',
      'rootDirectory: must stay inside the repository: ".." is not allowed',
    ]);
    const list = await t.call(alice, 'GET', '/v1/projects');
    expect(list.body.data.map((p: { name: string }) => p.name)).not.toContain('escape');

    const project = (await create({ name: 'kept', rootDirectory: 'apps/web' })).body.data;
    const bad = await t.call(alice, 'PATCH', `/v1/projects/${project.id}`, {
      rootDirectory: 'apps/../../x',
      buildCommand: 'x'.repeat(1001),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'buildCommand',
      'rootDirectory',
    ]);
    expect((await t.call(alice, 'GET', `/v1/projects/${project.id}`)).body.data.rootDirectory).toBe(
      'apps/web',
    );
  });
});
