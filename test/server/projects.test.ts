import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait-for.ts';

describe('projects', () => {
  let t: TestApp;
  let alice: TestUser;
  let mallory: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
    mallory = await t.user('mallory@example.com');
  });
  afterAll(() => t.close());

  const create = (user: TestUser, body: Record<string, unknown>) =>
    t.call(user, 'POST', '/v1/projects', {
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: user.orgId,
      ...body,
    });

  it('creates a project with defaults and answers 201', async () => {
    const res = await create(alice, { name: 'web' });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toMatchObject({
      name: 'web',
      branch: 'main',
      framework: null,
      status: 'active',
      deploymentUrl: null,
      organizationId: alice.orgId,
    });
    expect(res.body.data.id).toMatch(/^prj_[a-z0-9]{20}$/);
    expect(res.body.data.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('rejects a duplicate name in the organization with CONFLICT', async () => {
    const res = await create(alice, { name: 'dup' });
    expect(res.status).toBe(201);
    const again = await create(alice, { name: 'dup' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
  });

  it('names each bad field', async () => {
    const res = await t.call(alice, 'POST', '/v1/projects', {
      name: '-Bad',
      repositoryUrl: 'ftp://x',
      organizationId: alice.orgId,
      extra: 1,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    const paths = res.body.error.details.map((d: { path: string }) => d.path).sort();
    expect(paths).toEqual(['extra', 'name', 'repositoryUrl']);
  });

  it('takes every form of repository the builds read (absolute paths, scp-like), and names the forms otherwise', async () => {
    for (const [name, repositoryUrl] of [
      ['by-path', '/srv/git/web.git'],
      ['by-scp', 'git@github.com:acme/web.git'],
      ['by-file', 'file:///srv/git/web.git'],
    ] as const) {
      const res = await create(alice, { name, repositoryUrl });
      expect(res.status, `${repositoryUrl}: ${JSON.stringify(res.body)}`).toBe(201);
      expect(res.body.data.repositoryUrl).toBe(repositoryUrl);
    }
    const relative = await create(alice, { name: 'relative', repositoryUrl: 'srv/git/web.git' });
    expect(relative.status).toBe(400);
    expect(relative.body.error.details).toEqual([
      {
        path: 'repositoryUrl',
        message:
          'must be an https, http, ssh, git or file URL, an scp-like address such as git@github.com:owner/repo.git, or an absolute path',
      },
    ]);
  });

  it('reports malformed JSON and oversize bodies as VALIDATION_ERROR', async () => {
    const bad = await t.call(alice, 'POST', '/v1/projects', '{"name":');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    const big = await t.call(alice, 'POST', '/v1/projects', JSON.stringify({ name: 'x'.repeat(1_100_000) }));
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('hides other organizations’ projects as NOT_FOUND', async () => {
    const { body } = await create(alice, { name: 'private' });
    const res = await t.call(mallory, 'GET', `/v1/projects/${body.data.id}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    const other = await t.call(mallory, 'POST', '/v1/projects', {
      name: 'sneaky',
      repositoryUrl: 'https://example.com/r.git',
      organizationId: alice.orgId,
    });
    expect(other.status).toBe(404);
  });

  it('needs a token', async () => {
    const none = await t.call(null, 'GET', '/v1/projects');
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('UNAUTHORIZED');
    const bad = await t.call('slw_' + 'x'.repeat(40), 'GET', '/v1/projects');
    expect(bad.status).toBe(401);
  });

  it('updates and soft-deletes', async () => {
    const { body } = await create(alice, { name: 'tmp' });
    const id = body.data.id as string;
    const patched = await t.call(alice, 'PATCH', `/v1/projects/${id}`, {
      branch: 'develop',
      framework: 'vite',
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ branch: 'develop', framework: 'vite' });
    const del = await t.call(alice, 'DELETE', `/v1/projects/${id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, message: `Project ${id} deleted` });
    expect((await t.call(alice, 'GET', `/v1/projects/${id}`)).status).toBe(404);
    const deleted = await t.call(alice, 'GET', '/v1/projects?status=deleted');
    expect(deleted.body.data.map((p: { id: string }) => p.id)).toContain(id);
    const active = await t.call(alice, 'GET', '/v1/projects');
    expect(active.body.data.map((p: { id: string }) => p.id)).not.toContain(id);
    // The name is free again.
    expect((await create(alice, { name: 'tmp' })).status).toBe(201);
  });

  it('paginates newest first with meta, and rejects out-of-range limits', async () => {
    const u = await t.user();
    for (const n of ['p1', 'p2', 'p3']) {
      const created = await create(u, { name: n });
      // Newest first is by creation time, then by id (random): each project its own millisecond.
      const at = Date.parse(created.body.data.createdAt);
      await waitFor('the next millisecond', () => Date.now() > at);
    }
    const page = await t.call(u, 'GET', '/v1/projects?limit=2&page=1');
    expect(page.body.meta).toEqual({ page: 1, limit: 2, total: 3, next: expect.any(String) });
    expect(page.body.data.map((p: { name: string }) => p.name)).toEqual(['p3', 'p2']);
    const page2 = await t.call(u, 'GET', '/v1/projects?limit=2&page=2');
    expect(page2.body.data.map((p: { name: string }) => p.name)).toEqual(['p1']);
    for (const q of ['limit=0', 'limit=101', 'limit=1.5', 'page=0', 'limit=abc']) {
      const res = await t.call(u, 'GET', `/v1/projects?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
  });
});
