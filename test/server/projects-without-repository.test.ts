import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** A project made without repositoryUrl deploys uploaded files only, and says so when asked for git. */
describe('projects without a repository', () => {
  let t: TestApp;
  let alice: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
  });
  afterAll(() => t.close());

  it('is created without repositoryUrl, reads back with null, and takes uploaded files', async () => {
    const created = await t.call(alice, 'POST', '/v1/projects', {
      name: 'folder',
      organizationId: alice.orgId,
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'folder', repositoryUrl: null, branch: 'main' });
    const id = created.body.data.id as string;
    expect((await t.call(alice, 'GET', `/v1/projects/${id}`)).body.data.repositoryUrl).toBeNull();

    const text = '<h1>uploaded</h1>';
    await t.call(alice, 'POST', `/v1/projects/${id}/files/missing`, { sha256: [sha(text)] });
    const put = await t.app.inject({
      method: 'PUT',
      url: `/v1/projects/${id}/files/${sha(text)}`,
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream' },
      payload: text,
    });
    expect(put.statusCode).toBe(201);
    const deployed = await t.call(alice, 'POST', `/v1/projects/${id}/deployments`, {
      files: [{ path: 'index.html', sha256: sha(text), size: text.length }],
    });
    expect(deployed.status).toBe(201);
    expect(deployed.body.data).toMatchObject({ source: 'upload', status: 'queued' });
  });

  it('refuses to build from git, naming files and how to give it a repository; then builds from git', async () => {
    const id = (await t.call(alice, 'POST', '/v1/projects', { name: 'nogit', organizationId: alice.orgId }))
      .body.data.id as string;
    const before = await t.call(alice, 'GET', `/v1/projects/${id}/deployments`);
    const refused = await t.call(alice, 'POST', `/v1/projects/${id}/deployments`, { branch: 'main' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [
        {
          path: 'files',
          message: `is required: project nogit has no repository to build from, so it deploys uploaded files only (\`slipway deploy\` in a folder, or files in this body: docs/api/uploads.md); to build from git, give it one with PATCH /v1/projects/${id} {"repositoryUrl":"..."}`,
        },
      ],
    });
    expect((await t.call(alice, 'GET', `/v1/projects/${id}/deployments`)).body.meta.total).toBe(
      before.body.meta.total,
    );
    const patched = await t.call(alice, 'PATCH', `/v1/projects/${id}`, {
      repositoryUrl: 'https://example.com/acme/web.git',
    });
    expect(patched.body.data.repositoryUrl).toBe('https://example.com/acme/web.git');
    const queued = await t.call(alice, 'POST', `/v1/projects/${id}/deployments`, { branch: 'main' });
    expect(queued.status).toBe(201);
    expect(queued.body.data.source).toBe('git');
  });

  it('still checks a repositoryUrl that is given', async () => {
    const bad = await t.call(alice, 'POST', '/v1/projects', {
      name: 'bad',
      repositoryUrl: 'not a url',
      organizationId: alice.orgId,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe('repositoryUrl');
  });
});
