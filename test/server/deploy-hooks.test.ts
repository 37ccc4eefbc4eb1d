import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setProjectStatus } from '../../server/features/deployments/projects/set-project-status.ts';
import { markBuilding } from '../../server/features/deployments/deployment-state.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { addMember } from '../helpers/members.ts';

/** Every line the service logs, as written. */
function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, log: pino({ level: 'trace' }, stream) };
}

const LIMIT = 4;

describe('deploy hooks', () => {
  let t: TestApp;
  let clock: ManualClock;
  let logs: ReturnType<typeof capture>;
  let owner: TestUser;
  let admin: TestUser;
  let developer: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;
  let projectId: string;

  beforeAll(async () => {
    clock = new ManualClock('2026-11-22T10:00:00.000Z');
    logs = capture();
    t = await createTestApp({ clock, log: logs.log, env: { SLIPWAY_DEPLOY_HOOK_RATE_LIMIT: String(LIMIT) } });
    owner = await t.user();
    admin = await t.user();
    developer = await t.user();
    viewer = await t.user();
    stranger = await t.user();
    await addMember(t, owner.orgId, admin, 'admin');
    await addMember(t, owner.orgId, developer, 'developer');
    await addMember(t, owner.orgId, viewer, 'viewer');
    await t.deps.db
      .updateTable('organizations')
      .set({ plan: 'enterprise' })
      .where('id', '=', owner.orgId)
      .execute();
    projectId = await project('site');
  });
  afterAll(() => t.close());

  async function project(name: string): Promise<string> {
    const res = await t.call(owner, 'POST', '/v1/projects', {
      name,
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: owner.orgId,
      branch: 'main',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id as string;
  }

  async function createHook(body: { name: string; branch: string }, user = admin, pid = projectId) {
    const res = await t.call(user, 'POST', `/v1/projects/${pid}/deploy-hooks`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string; url: string; urlPrefix: string; name: string };
  }

  /** POSTs a hook's URL as a CMS would: no token, whatever body. */
  const trigger = (url: string, payload?: string, contentType?: string) =>
    t.app.inject({
      method: 'POST',
      url: new URL(url).pathname,
      ...(payload === undefined
        ? {}
        : { payload, headers: { 'content-type': contentType ?? 'application/json' } }),
    });

  it('admins and owners make hooks; the URL with its secret is in the answer once', async () => {
    const made = await createHook({ name: 'cms', branch: 'main' });
    expect(made.id).toMatch(/^dph_[a-z0-9]{20}$/);
    expect(made.url).toMatch(
      new RegExp(`^http://localhost:\\d+/v1/hooks/deploy/${made.id}\\.slwh_[A-Za-z0-9_-]{43}$`),
    );
    expect(made.url.startsWith(made.urlPrefix)).toBe(true);
    expect(made).toMatchObject({ name: 'cms', branch: 'main', createdBy: admin.email, lastUsedAt: null });
    const byOwner = await createHook({ name: 'nightly', branch: 'main' }, owner);
    expect(byOwner.url).not.toBe(made.url);

    for (const user of [developer, viewer]) {
      const res = await t.call(user, 'POST', `/v1/projects/${projectId}/deploy-hooks`, {
        name: 'x',
        branch: 'main',
      });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
    const outsider = await t.call(stranger, 'POST', `/v1/projects/${projectId}/deploy-hooks`, {
      name: 'x',
      branch: 'main',
    });
    expect(outsider.status).toBe(404);

    const dup = await t.call(admin, 'POST', `/v1/projects/${projectId}/deploy-hooks`, {
      name: 'cms',
      branch: 'dev',
    });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('CONFLICT');
    const bad = await t.call(admin, 'POST', `/v1/projects/${projectId}/deploy-hooks`, {
      name: '',
      branch: 'a..b',
      extra: 1,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'branch',
      'extra',
      'name',
    ]);
  });

  it('every member lists the hooks without secrets; nothing later shows a secret', async () => {
    const made = await createHook({ name: 'listed', branch: 'main' });
    const secret = made.url.slice(made.urlPrefix.length);
    for (const user of [owner, admin, developer, viewer]) {
      const res = await t.call(user, 'GET', `/v1/projects/${projectId}/deploy-hooks?limit=100`);
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(secret);
      expect(res.text).not.toContain('slwh_');
      const listed = res.body.data.find((h: { id: string }) => h.id === made.id);
      expect(listed).toEqual({
        id: made.id,
        name: 'listed',
        branch: 'main',
        urlPrefix: made.urlPrefix,
        createdBy: admin.email,
        createdAt: expect.any(String),
        lastUsedAt: null,
      });
      expect(res.body.meta).toMatchObject({ page: 1, total: res.body.data.length });
    }
    expect((await t.call(stranger, 'GET', `/v1/projects/${projectId}/deploy-hooks`)).status).toBe(404);
    // The database keeps only the SHA-256 of the secret.
    const rows = await t.deps.db.selectFrom('deploy_hooks').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(rows.find((r) => r.id === made.id)!.secret_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a POST queues a git build of the branch head, production for the project branch, preview otherwise', async () => {
    const prod = await createHook({ name: 'prod-hook', branch: 'main' });
    const preview = await createHook({ name: 'preview-hook', branch: 'feature/x' });

    // A CMS sends its own JSON payload; another sends a form, another nothing: all are ignored.
    const first = await trigger(prod.url, JSON.stringify({ sys: { type: 'Entry' } }));
    expect(first.statusCode, first.body).toBe(201);
    const answer = first.json().data;
    expect(Object.keys(answer).sort()).toEqual(['created', 'id', 'url']);
    expect(answer.created).toBe(true);
    expect(first.headers['x-ratelimit-limit']).toBe(String(LIMIT));
    expect(first.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));

    const d = await t.call(owner, 'GET', `/v1/deployments/${answer.id}`);
    expect(d.body.data).toMatchObject({
      projectId,
      status: 'queued',
      target: 'production',
      branch: 'main',
      commitHash: null,
      source: 'git',
      message: 'Deploy hook "prod-hook"',
      url: answer.url,
    });
    const row = await t.deps.db
      .selectFrom('deployments')
      .selectAll()
      .where('id', '=', answer.id)
      .executeTakeFirstOrThrow();
    expect(row.created_by).toBe(admin.userId);
    const job = await t.deps.db
      .selectFrom('jobs')
      .select('payload')
      .where('payload', 'like', `%${answer.id}%`)
      .execute();
    expect(job).toHaveLength(1);

    const form = await trigger(preview.url, 'a=1&b=2', 'application/x-www-form-urlencoded');
    expect(form.statusCode, form.body).toBe(201);
    const p = await t.call(owner, 'GET', `/v1/deployments/${form.json().data.id}`);
    expect(p.body.data).toMatchObject({ target: 'preview', branch: 'feature/x' });

    const listed = await t.call(viewer, 'GET', `/v1/projects/${projectId}/deploy-hooks?limit=100`);
    expect(listed.body.data.find((h: { id: string }) => h.id === prod.id).lastUsedAt).toBe(
      clock.now().toISOString(),
    );
  });

  it('a POST while the previous deployment is still queued answers that one; once it builds, a new one', async () => {
    const hook = await createHook({ name: 'collapse', branch: 'main' });
    const a = await trigger(hook.url);
    expect(a.statusCode).toBe(201);
    const again = await trigger(hook.url);
    expect(again.statusCode).toBe(200);
    expect(again.json().data).toEqual({ ...a.json().data, created: false });
    const count = async () =>
      (
        await t.deps.db
          .selectFrom('deployments')
          .select('id')
          .where('message', '=', 'Deploy hook "collapse"')
          .execute()
      ).length;
    expect(await count()).toBe(1);
    await markBuilding(t.deps, a.json().data.id, {
      commitHash: 'a'.repeat(40),
      commitMessage: 'x',
      author: 'a@example.com',
    });
    const b = await trigger(hook.url);
    expect(b.statusCode).toBe(201);
    expect(b.json().data.id).not.toBe(a.json().data.id);
    expect(await count()).toBe(2);
  });

  it('unknown, revoked and wrong-secret URLs all answer the same 404, and queue nothing', async () => {
    const hook = await createHook({ name: 'to-revoke', branch: 'main' });
    const other = await createHook({ name: 'other', branch: 'main' });
    const secret = hook.url.slice(hook.urlPrefix.length);
    const otherSecret = other.url.slice(other.urlPrefix.length);
    const before = await t.deps.db.selectFrom('deployments').select('id').execute();

    const tries = [
      `${hook.urlPrefix}${otherSecret}`, // right id, another hook's secret
      `${hook.urlPrefix}slwh_${'A'.repeat(43)}`, // right id, made-up secret
      `${hook.urlPrefix.replace(hook.id, 'dph_aaaaaaaaaaaaaaaaaaaa')}${secret}`, // unknown id
      `${hook.urlPrefix}nonsense`,
      hook.urlPrefix.replace(/\.$/, ''),
    ];
    const answers = await Promise.all(tries.map((url) => trigger(url)));
    for (const res of answers) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(answers[0]!.json());
    }
    expect(answers[0]!.json().error.code).toBe('NOT_FOUND');

    // Developers may not revoke; admins may.
    expect(
      (await t.call(developer, 'DELETE', `/v1/projects/${projectId}/deploy-hooks/${hook.id}`)).status,
    ).toBe(403);
    const del = await t.call(admin, 'DELETE', `/v1/projects/${projectId}/deploy-hooks/${hook.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, message: `Deploy hook ${hook.id} revoked` });
    expect((await t.call(admin, 'DELETE', `/v1/projects/${projectId}/deploy-hooks/${hook.id}`)).status).toBe(
      404,
    );
    const revoked = await trigger(hook.url);
    expect(revoked.statusCode).toBe(404);
    expect(revoked.json()).toEqual(answers[0]!.json());
    const after = await t.deps.db.selectFrom('deployments').select('id').execute();
    expect(after).toHaveLength(before.length);
    // A hook of a deleted project is gone with it.
    const gone = await project('gone');
    const doomed = await createHook({ name: 'doomed', branch: 'main' }, admin, gone);
    expect((await t.call(owner, 'DELETE', `/v1/projects/${gone}`)).status).toBe(200);
    expect((await trigger(doomed.url)).json()).toEqual(answers[0]!.json());
  });

  it('a suspended project refuses with its usual error', async () => {
    const pid = await project('paused');
    const hook = await createHook({ name: 'cms', branch: 'main' }, admin, pid);
    await setProjectStatus(t.deps, pid, 'suspended');
    const res = await trigger(hook.url);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('FORBIDDEN');
    expect(res.json().error.message).toMatch(/suspended/);
    const n = await t.deps.db.selectFrom('deployments').select('id').where('project_id', '=', pid).execute();
    expect(n).toHaveLength(0);
  });

  it(`takes ${LIMIT} requests an hour per hook, then 429 naming the limit; refusals do not count`, async () => {
    clock.set('2026-11-22T11:00:00.000Z');
    const hook = await createHook({ name: 'limited', branch: 'main' });
    const neighbour = await createHook({ name: 'neighbour', branch: 'main' });
    for (let i = 0; i < LIMIT; i++) expect((await trigger(hook.url)).statusCode).toBeLessThan(300);
    clock.advance(10 * 60_000);
    const refused = await trigger(hook.url);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused.json().error.message).toContain(`${LIMIT} requests per hour`);
    expect(refused.headers['retry-after']).toBe(String(50 * 60));
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect((await trigger(hook.url)).statusCode).toBe(429);
    // Another hook has its own window.
    expect((await trigger(neighbour.url)).statusCode).toBeLessThan(300);
    // A wrong secret for this hook neither counts nor reveals the limit.
    expect((await trigger(`${hook.urlPrefix}slwh_${'B'.repeat(43)}`)).statusCode).toBe(404);
    // The next hour starts afresh, and the refusals were not counted into it.
    clock.set('2026-11-22T12:00:00.000Z');
    const next = await trigger(hook.url);
    expect(next.statusCode).toBeLessThan(300);
    expect(next.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
  });

  it('two POSTs at once queue one deployment', async () => {
    const hook = await createHook({ name: 'race', branch: 'main' });
    const both = await Promise.all([trigger(hook.url), trigger(hook.url)]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([200, 201]);
    expect(new Set(both.map((r) => r.json().data.id)).size).toBe(1);
  });

  it('only the OpenAPI description knows the route; a wrong method does not echo the secret', async () => {
    const hook = await createHook({ name: 'methods', branch: 'main' });
    const secret = hook.url.slice(hook.urlPrefix.length);
    const get = await t.app.inject({ method: 'GET', url: new URL(hook.url).pathname });
    expect(get.statusCode).toBe(404);
    expect(get.body).not.toContain(secret);
    const doc = (await t.call(null, 'GET', '/v1/openapi.json')).body;
    const op = doc.paths['/v1/hooks/deploy/{key}'].post;
    expect(op.security).toEqual([]);
    expect(Object.keys(op.responses).sort()).toEqual(['201', 'default']);
  });

  it('the secret never reaches the logs', async () => {
    const hook = await createHook({ name: 'logged', branch: 'main' });
    const secret = hook.url.slice(hook.urlPrefix.length);
    await trigger(hook.url);
    await trigger(`${hook.urlPrefix}${secret}x`);
    await t.app.inject({ method: 'GET', url: new URL(hook.url).pathname });
    const all = logs.lines.join('\n');
    // The requests were logged: by the hook's id, with the rest hidden.
    expect(all).toContain(`/v1/hooks/deploy/${hook.id}.***`);
    expect(all).not.toContain(secret);
    expect(all).not.toContain(secret.slice(5, 20));
  });
});
