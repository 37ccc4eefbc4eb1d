import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { insertDeployment } from '../helpers/edge.ts';

/** Cursor pagination (`cursor`, `meta.next`, `Link`) beside page numbers, on every list. */
describe('pagination by cursor', () => {
  let t: TestApp;
  let alice: TestUser;
  let projectId: string;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
    const res = await t.call(alice, 'POST', '/v1/projects', {
      name: 'paged',
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
    });
    projectId = res.body.data.id;
    // 23 deployments, several sharing a creation time: the id breaks the tie, in pages and cursors alike.
    for (let i = 0; i < 23; i++) {
      const at = new Date(Date.UTC(2026, 10, 1, 0, 0, Math.floor(i / 3))).toISOString();
      const status = i % 4 === 0 ? 'failed' : 'live';
      await insertDeployment(t, projectId, { created_at: at, updated_at: at, status });
    }
  });
  afterAll(() => t.close());

  const list = (query: string) => t.call(alice, 'GET', `/v1/projects/${projectId}/deployments?${query}`);

  async function expectedOrder(status?: string): Promise<string[]> {
    let q = t.deps.db.selectFrom('deployments').select('id').where('project_id', '=', projectId);
    if (status) q = q.where('status', '=', status as 'live');
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map((r) => r.id);
  }

  async function walk(first: string): Promise<{ ids: string[]; links: string[] }> {
    const ids: string[] = [];
    const links: string[] = [];
    let res = await list(first);
    for (;;) {
      expect(res.status).toBe(200);
      ids.push(...res.body.data.map((d: { id: string }) => d.id));
      if (!res.body.meta.next) {
        expect(res.headers.link).toBeUndefined();
        return { ids, links };
      }
      links.push(String(res.headers.link));
      res = await list(`${first}&cursor=${res.body.meta.next}`);
    }
  }

  it('walks every item once, newest first, in the order of page numbers', async () => {
    const { ids, links } = await walk('limit=5');
    expect(ids).toEqual(await expectedOrder());
    expect(ids).toHaveLength(23);
    expect(links).toHaveLength(4);
    // The Link header is the same request with the cursor, under the API's public URL.
    expect(links[0]).toMatch(
      new RegExp(
        `^<http://[^>]+/v1/projects/${projectId}/deployments\\?limit=5&cursor=[A-Za-z0-9_-]+>; rel="next"$`,
      ),
    );
    const byPage: string[] = [];
    for (let page = 1; page <= 5; page++) {
      const res = await list(`limit=5&page=${page}`);
      expect(res.body.meta).toEqual({
        page,
        limit: 5,
        total: 23,
        next: page < 5 ? expect.stringMatching(/^[A-Za-z0-9_-]+$/) : null,
      });
      byPage.push(...res.body.data.map((d: { id: string }) => d.id));
    }
    expect(byPage).toEqual(ids);
  });

  it('answers a cursor with limit and next only, and keeps the filters', async () => {
    const { ids } = await walk('limit=2&status=failed');
    expect(ids).toEqual(await expectedOrder('failed'));
    expect(ids).toHaveLength(6);
    const first = await list('limit=2&status=failed');
    const second = await list(`limit=2&status=failed&cursor=${first.body.meta.next}`);
    expect(second.body.meta).toEqual({ limit: 2, next: expect.any(String) });
  });

  it('neither skips nor repeats an item when newer ones arrive while walking', async () => {
    const before = await expectedOrder();
    const first = await list('limit=10');
    const fresh = await insertDeployment(t, projectId, { created_at: new Date().toISOString() });
    let res = await list(`limit=10&cursor=${first.body.meta.next}`);
    const ids = first.body.data.map((d: { id: string }) => d.id);
    while (res.body.data.length > 0) {
      ids.push(...res.body.data.map((d: { id: string }) => d.id));
      if (!res.body.meta.next) break;
      res = await list(`limit=10&cursor=${res.body.meta.next}`);
    }
    expect(ids).toEqual(before);
    expect(ids).not.toContain(fresh.id);
  });

  it('names a bad cursor, and page given with a cursor, and changes nothing', async () => {
    for (const cursor of ['nope', 'W10', Buffer.from('[1,2]').toString('base64url'), 'a%2Fb']) {
      const res = await list(`cursor=${cursor}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details).toEqual([
        { path: 'cursor', message: 'cursor must be the meta.next value of a previous page of this list' },
      ]);
    }
    const first = await list('limit=2');
    const both = await list(`limit=2&page=2&cursor=${first.body.meta.next}`);
    expect(both.status).toBe(400);
    expect(both.body.error.details).toEqual([
      { path: 'page', message: 'give either page or cursor, not both' },
    ]);
  });

  it('gives every list a next cursor', async () => {
    const bob = await t.user('bob@example.com');
    for (const name of ['a', 'b', 'c']) {
      await t.call(bob, 'POST', '/v1/projects', {
        name,
        repositoryUrl: 'https://example.com/repo.git',
        organizationId: bob.orgId,
      });
      await t.call(bob, 'POST', '/v1/user/tokens', { name });
    }
    for (const url of ['/v1/projects', '/v1/user/tokens']) {
      const first = await t.call(bob, 'GET', `${url}?limit=2`);
      expect(first.body.meta.next).toEqual(expect.any(String));
      const rest = await t.call(bob, 'GET', `${url}?limit=2&cursor=${first.body.meta.next}`);
      expect(rest.status).toBe(200);
      const all = await t.call(bob, 'GET', `${url}?limit=100`);
      expect([...first.body.data, ...rest.body.data].map((x: { id: string }) => x.id)).toEqual(
        all.body.data
          .slice(0, first.body.data.length + rest.body.data.length)
          .map((x: { id: string }) => x.id),
      );
      expect(all.body.meta.next).toBeNull();
    }
  });
});
