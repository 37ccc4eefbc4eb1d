import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** Uploads a grant covers do not draw on the hourly rate limit; the grant is bounded and bound. */
describe('upload grants', () => {
  let t: TestApp;
  let alice: TestUser;
  let mallory: TestUser;
  let pid: string;
  let otherPid: string;
  let malloryPid: string;
  const clock = new ManualClock('2026-11-22T10:00:00.000Z');

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    mallory = await t.user('mallory@example.com');
    const project = async (u: TestUser, name: string) =>
      (
        await t.call(u, 'POST', '/v1/projects', {
          name,
          repositoryUrl: 'https://example.com/repo.git',
          organizationId: u.orgId,
        })
      ).body.data.id as string;
    pid = await project(alice, 'site');
    otherPid = await project(alice, 'other');
    malloryPid = await project(mallory, 'hers');
  });
  afterAll(() => t.close());

  const ask = async (user: TestUser, project: string, texts: string[]) => {
    const res = await t.call(user, 'POST', `/v1/projects/${project}/files/missing`, {
      sha256: texts.map(sha),
    });
    expect(res.status).toBe(200);
    return {
      grant: res.body.data.uploadGrant as string | undefined,
      left: Number(res.headers['x-ratelimit-remaining']),
    };
  };
  const put = async (user: TestUser, project: string, text: string, grant?: string) => {
    const res = await t.app.inject({
      method: 'PUT',
      url: `/v1/projects/${project}/files/${sha(text)}`,
      headers: {
        authorization: `Bearer ${user.token}`,
        'content-type': 'application/octet-stream',
        ...(grant === undefined ? {} : { 'x-slipway-upload-grant': grant }),
      },
      payload: text,
    });
    return { status: res.statusCode, left: Number(res.headers['x-ratelimit-remaining']), body: res.json() };
  };

  it('covers as many uploads as files were missing, each answer still saying what is left', async () => {
    const texts = ['one', 'two', 'three'];
    const { grant, left } = await ask(alice, pid, texts);
    expect(grant).toMatch(/^v1\./);
    for (const text of texts) expect(await put(alice, pid, text, grant)).toMatchObject({ status: 201, left });
    // A fourth use (a retry, a repeat) counts as any request.
    expect(await put(alice, pid, 'one', grant)).toMatchObject({ status: 200, left: left - 1 });
    // Nothing missing: no grant.
    expect((await ask(alice, pid, texts)).grant).toBeUndefined();
  });

  it('refuses a grant of another user or project, or none of ours, naming the header; counts nothing', async () => {
    const { grant, left } = await ask(alice, pid, ['four']);
    const why = {
      code: 'VALIDATION_ERROR',
      details: [
        {
          path: 'header.X-Slipway-Upload-Grant',
          message: expect.stringContaining('is not an upload grant this service gave you for this project'),
        },
      ],
    };
    for (const [user, project, g] of [
      [mallory, malloryPid, grant],
      [alice, otherPid, grant],
      [alice, pid, 'v1.forged.grant.text'],
    ] as const) {
      const res = await put(user, project, 'four', g);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject(why);
    }
    expect((await put(alice, pid, 'four', grant)).left).toBe(left);
  });

  it('an expired grant covers nothing: the upload counts', async () => {
    const { grant } = await ask(alice, pid, ['five']);
    clock.advance(3600_000 + 1000);
    const now = await t.call(alice, 'GET', '/v1/user');
    const left = Number(now.headers['x-ratelimit-remaining']);
    expect(await put(alice, pid, 'five', grant)).toMatchObject({ status: 201, left: left - 1 });
  });
});
