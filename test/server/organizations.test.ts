import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';

describe('organizations and members', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-11-22T10:00:00.000Z');
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let mallory: TestUser;
  let acme: string;
  let seq = 0;

  const members = (orgId: string, user: TestUser = alice) =>
    t.call(user, 'GET', `/v1/organizations/${orgId}/members?limit=100`);
  const invite = (user: TestUser, orgId: string, email: string, role?: string) =>
    t.call(user, 'POST', `/v1/organizations/${orgId}/members/invite`, { email, ...(role ? { role } : {}) });
  const remove = (user: TestUser, orgId: string, email: string) =>
    t.call(user, 'DELETE', `/v1/organizations/${orgId}/members/${encodeURIComponent(email)}`);
  const setRole = (user: TestUser, orgId: string, email: string, role: string) =>
    t.call(user, 'PATCH', `/v1/organizations/${orgId}/members/${encodeURIComponent(email)}`, { role });
  /** A fresh organization owned by alice, with bob admin, carol developer and dave viewer. */
  const team = async () => {
    const res = await t.call(alice, 'POST', '/v1/organizations', { name: `team-${++seq}` });
    expect(res.status).toBe(201);
    const id = res.body.data.id as string;
    for (const [u, role] of [
      [bob, 'admin'],
      [carol, 'developer'],
      [dave, 'viewer'],
    ] as const) {
      clock.advance(1);
      expect((await invite(alice, id, u.email, role)).status).toBe(201);
    }
    return id;
  };

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    bob = await t.user('bob@example.com');
    carol = await t.user('carol@example.com');
    dave = await t.user('dave@example.com');
    mallory = await t.user('mallory@example.com');
    acme = await team();
  });
  afterAll(() => t.close());
  // Distinct timestamps keep "newest first" deterministic.
  beforeEach(() => clock.advance(60_000));

  describe('organizations', () => {
    it('creates an organization with the caller as owner and answers 201', async () => {
      const res = await t.call(alice, 'POST', '/v1/organizations', { name: 'globex' });
      expect(res.status).toBe(201);
      expect(res.body.success).toBe(true);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^org_[a-z0-9]{20}$/),
        name: 'globex',
        displayName: 'globex',
        plan: 'free',
        memberCount: 1,
        projectCount: 0,
        personal: false,
        createdAt: clock.now().toISOString(),
        role: 'owner',
      });
      const m = await members(res.body.data.id);
      expect(m.body.data).toEqual([
        {
          email: 'alice@example.com',
          role: 'owner',
          status: 'active',
          invitedAt: clock.now().toISOString(),
          joinedAt: clock.now().toISOString(),
        },
      ]);
    });

    it('takes displayName and plan', async () => {
      const res = await t.call(bob, 'POST', '/v1/organizations', {
        name: 'initech',
        displayName: '  Initech Inc.  ',
        plan: 'pro',
      });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ name: 'initech', displayName: 'Initech Inc.', plan: 'pro' });
    });

    it('keeps names unique across the service, personal organizations included', async () => {
      expect((await t.call(mallory, 'POST', '/v1/organizations', { name: 'dup-org' })).status).toBe(201);
      const again = await t.call(alice, 'POST', '/v1/organizations', { name: 'dup-org' });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('CONFLICT');
      expect(again.body.error.message).toContain('dup-org');
      // alice@example.com's personal organization is called "alice".
      expect((await t.call(bob, 'POST', '/v1/organizations', { name: 'alice' })).status).toBe(409);
    });

    it('names each bad field', async () => {
      const res = await t.call(alice, 'POST', '/v1/organizations', {
        name: 'Bad_Name',
        plan: 'gold',
        displayName: '',
        owner: 'x',
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      const paths = res.body.error.details.map((d: { path: string }) => d.path).sort();
      expect(paths).toEqual(['displayName', 'name', 'owner', 'plan']);
      const missing = await t.call(alice, 'POST', '/v1/organizations', {});
      expect(missing.body.error.details).toEqual([{ path: 'name', message: 'is required' }]);
    });

    it('needs a token', async () => {
      for (const [method, url] of [
        ['GET', '/v1/organizations'],
        ['POST', '/v1/organizations'],
        ['GET', `/v1/organizations/${acme}`],
        ['GET', `/v1/organizations/${acme}/members`],
      ] as const) {
        const res = await t.call(null, method, url);
        expect(res.status, url).toBe(401);
        expect(res.body.error.code).toBe('UNAUTHORIZED');
      }
    });

    it("lists the caller's organizations newest first with meta", async () => {
      const u = await t.user();
      const names: string[] = [];
      for (let i = 1; i <= 3; i++) {
        clock.advance(1000);
        const res = await t.call(u, 'POST', '/v1/organizations', { name: `list-${seq}-${i}` });
        names.push(res.body.data.name);
      }
      const all = await t.call(u, 'GET', '/v1/organizations');
      expect(all.status).toBe(200);
      expect(all.body.meta).toEqual({ page: 1, limit: 10, total: 4, next: null });
      expect(all.body.data.map((o: { name: string }) => o.name).slice(0, 3)).toEqual(names.reverse());
      expect(all.body.data[3]).toMatchObject({ id: u.orgId, personal: true, role: 'owner', plan: 'free' });
      const page2 = await t.call(u, 'GET', '/v1/organizations?limit=2&page=2');
      expect(page2.body.meta).toEqual({ page: 2, limit: 2, total: 4, next: null });
      expect(page2.body.data.map((o: { id: string }) => o.id)).toEqual([all.body.data[2].id, u.orgId]);
      for (const q of ['limit=0', 'limit=101', 'page=0', 'page=x', 'sort=name']) {
        const bad = await t.call(u, 'GET', `/v1/organizations?${q}`);
        expect(bad.status, q).toBe(400);
        expect(bad.body.error.code).toBe('VALIDATION_ERROR');
      }
    });

    it('lists only organizations the caller belongs to, each with the caller’s role', async () => {
      const res = await t.call(dave, 'GET', '/v1/organizations?limit=100');
      const ids = res.body.data.map((o: { id: string }) => o.id);
      expect(ids).toContain(acme);
      expect(ids).toContain(dave.orgId);
      expect(ids).not.toContain(alice.orgId);
      expect(res.body.data.find((o: { id: string }) => o.id === acme).role).toBe('viewer');
    });

    it('reads an organization by id or name; non-members get NOT_FOUND', async () => {
      const byId = await t.call(carol, 'GET', `/v1/organizations/${acme}`);
      expect(byId.status).toBe(200);
      expect(byId.body.data).toMatchObject({ id: acme, memberCount: 4, role: 'developer' });
      const byName = await t.call(carol, 'GET', `/v1/organizations/${byId.body.data.name}`);
      expect(byName.body.data.id).toBe(acme);
      const hidden = await t.call(mallory, 'GET', `/v1/organizations/${acme}`);
      expect(hidden.status).toBe(404);
      expect(hidden.body.error).toEqual({ code: 'NOT_FOUND', message: `Organization ${acme} not found` });
      const missing = await t.call(alice, 'GET', '/v1/organizations/org_doesnotexist000000');
      expect(missing.status).toBe(404);
    });

    it('counts active members and projects that are not deleted', async () => {
      const org = await team();
      await invite(alice, org, 'nobody-yet@example.com', 'viewer');
      const p1 = await t.call(carol, 'POST', '/v1/projects', {
        name: 'web',
        repositoryUrl: 'https://example.com/r.git',
        organizationId: org,
      });
      expect(p1.status).toBe(201);
      await t.call(carol, 'POST', '/v1/projects', {
        name: 'api',
        repositoryUrl: 'https://example.com/r.git',
        organizationId: org,
      });
      expect((await t.call(alice, 'DELETE', `/v1/projects/${p1.body.data.id}`)).status).toBe(200);
      const res = await t.call(alice, 'GET', `/v1/organizations/${org}`);
      expect(res.body.data).toMatchObject({ memberCount: 4, projectCount: 1 });
      expect((await members(org)).body.meta.total).toBe(5);
    });

    it('lets admins and owners update it; developers and viewers get FORBIDDEN', async () => {
      const org = await team();
      const byOwner = await t.call(alice, 'PATCH', `/v1/organizations/${org}`, {
        displayName: 'The Team',
        plan: 'pro',
      });
      expect(byOwner.status).toBe(200);
      expect(byOwner.body.data).toMatchObject({ id: org, displayName: 'The Team', plan: 'pro' });
      const renamed = await t.call(bob, 'PATCH', `/v1/organizations/${org}`, { name: `renamed-${seq}` });
      expect(renamed.status).toBe(200);
      expect(renamed.body.data).toMatchObject({
        name: `renamed-${seq}`,
        displayName: 'The Team',
        role: 'admin',
      });
      for (const u of [carol, dave]) {
        const res = await t.call(u, 'PATCH', `/v1/organizations/${org}`, { displayName: 'x' });
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('FORBIDDEN');
      }
      expect((await t.call(mallory, 'PATCH', `/v1/organizations/${org}`, { plan: 'free' })).status).toBe(404);
      expect((await t.call(alice, 'GET', `/v1/organizations/${org}`)).body.data.displayName).toBe('The Team');
    });

    it('refuses a rename to a taken name and an empty or unknown update', async () => {
      const taken = await t.call(alice, 'PATCH', `/v1/organizations/${acme}`, { name: 'alice' });
      expect(taken.status).toBe(409);
      expect(taken.body.error.code).toBe('CONFLICT');
      const empty = await t.call(alice, 'PATCH', `/v1/organizations/${acme}`, {});
      expect(empty.status).toBe(400);
      const unknown = await t.call(alice, 'PATCH', `/v1/organizations/${acme}`, { memberCount: 3 });
      expect(unknown.body.error.details).toEqual([{ path: 'memberCount', message: 'is not a known field' }]);
    });

    it('shows organizations and roles in GET /v1/user', async () => {
      const res = await t.call(bob, 'GET', '/v1/user');
      expect(res.status).toBe(200);
      expect(res.body.data.id).toBe(bob.userId);
      expect(res.body.data.email).toBe('bob@example.com');
      expect(res.body.data.organizations).toContainEqual({
        id: bob.orgId,
        name: 'bob',
        role: 'owner',
        plan: 'free',
      });
      expect(res.body.data.organizations).toContainEqual(
        expect.objectContaining({ id: acme, role: 'admin' }),
      );
    });
  });

  describe('members', () => {
    it('lists members with role, status and dates; any member may, non-members get NOT_FOUND', async () => {
      const res = await members(acme, dave);
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ page: 1, limit: 100, total: 4, next: null });
      const byEmail = Object.fromEntries(res.body.data.map((m: { email: string }) => [m.email, m]));
      expect(byEmail['dave@example.com']).toMatchObject({ role: 'viewer', status: 'active' });
      expect(byEmail['dave@example.com'].joinedAt).toBe(byEmail['dave@example.com'].invitedAt);
      expect(res.body.data.map((m: { email: string }) => m.email)).toEqual([
        'dave@example.com',
        'carol@example.com',
        'bob@example.com',
        'alice@example.com',
      ]);
      const page = await t.call(alice, 'GET', `/v1/organizations/${acme}/members?limit=1&page=4`);
      expect(page.body.data.map((m: { email: string }) => m.email)).toEqual(['alice@example.com']);
      expect((await members(acme, mallory)).status).toBe(404);
      expect((await t.call(alice, 'GET', `/v1/organizations/${acme}/members?limit=500`)).status).toBe(400);
    });

    it('invites an existing user as active at once', async () => {
      const org = await team();
      const res = await invite(bob, org, 'Mallory@Example.com', 'developer');
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        email: 'mallory@example.com',
        role: 'developer',
        status: 'active',
        invitedAt: clock.now().toISOString(),
        joinedAt: clock.now().toISOString(),
      });
      const seen = await t.call(mallory, 'GET', `/v1/organizations/${org}`);
      expect(seen.status).toBe(200);
      expect(seen.body.data.role).toBe('developer');
    });

    it('keeps an invitation for an unknown e-mail until that user is created', async () => {
      const org = await team();
      const email = `newcomer-${seq}@example.com`;
      const res = await invite(alice, org, email, 'viewer');
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ email, role: 'viewer', status: 'invited', joinedAt: null });
      expect((await t.call(alice, 'GET', `/v1/organizations/${org}`)).body.data.memberCount).toBe(4);

      clock.advance(5000);
      const newcomer = await t.user(email);
      const list = await members(org);
      expect(list.body.data.find((m: { email: string }) => m.email === email)).toMatchObject({
        status: 'active',
        joinedAt: clock.now().toISOString(),
      });
      const seen = await t.call(newcomer, 'GET', `/v1/organizations/${org}`);
      expect(seen.status).toBe(200);
      expect(seen.body.data).toMatchObject({ role: 'viewer', memberCount: 5 });
    });

    it('defaults the role to developer and names bad fields', async () => {
      const org = await team();
      const res = await invite(alice, org, 'default-role@example.com');
      expect(res.body.data.role).toBe('developer');
      const bad = await t.call(alice, 'POST', `/v1/organizations/${org}/members/invite`, {
        email: 'not-an-email',
        role: 'superuser',
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['email', 'role']);
    });

    it('refuses to invite an existing member or a pending invitation again', async () => {
      const org = await team();
      const active = await invite(alice, org, 'CAROL@example.com', 'viewer');
      expect(active.status).toBe(409);
      expect(active.body.error.message).toContain('already a member');
      expect((await invite(alice, org, 'pending@example.com')).status).toBe(201);
      const pending = await invite(bob, org, 'pending@example.com');
      expect(pending.status).toBe(409);
      expect(pending.body.error.message).toContain('already invited');
    });

    it('lets only admins and owners invite, and only owners invite owners', async () => {
      const org = await team();
      for (const u of [carol, dave]) {
        const res = await invite(u, org, `by-${u.email}`, 'viewer');
        expect(res.status, u.email).toBe(403);
        expect(res.body.error.code).toBe('FORBIDDEN');
      }
      const adminOwner = await invite(bob, org, 'boss@example.com', 'owner');
      expect(adminOwner.status).toBe(403);
      expect(adminOwner.body.error.message).toContain('Only an owner');
      expect((await invite(bob, org, 'helper@example.com', 'admin')).status).toBe(201);
      expect((await invite(alice, org, 'boss@example.com', 'owner')).status).toBe(201);
      expect((await invite(mallory, org, 'x@example.com')).status).toBe(404);
      const emails = (await members(org)).body.data.map((m: { email: string }) => m.email);
      expect(emails).not.toContain('by-dave@example.com');
      expect(emails).toContain('boss@example.com');
    });

    it('lets admins remove members and cancel invitations', async () => {
      const org = await team();
      await invite(alice, org, 'pending@example.com');
      const res = await remove(bob, org, 'carol@example.com');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: `Member carol@example.com removed from organization ${org}`,
      });
      expect((await remove(bob, org, 'pending@example.com')).status).toBe(200);
      expect((await t.call(carol, 'GET', `/v1/organizations/${org}`)).status).toBe(404);
      const emails = (await members(org)).body.data.map((m: { email: string }) => m.email);
      expect(emails.sort()).toEqual(['alice@example.com', 'bob@example.com', 'dave@example.com']);
      const gone = await remove(bob, org, 'carol@example.com');
      expect(gone.status).toBe(404);
      expect(gone.body.error.code).toBe('NOT_FOUND');
    });

    it('forbids developers and viewers to remove others, and admins to remove owners', async () => {
      const org = await team();
      expect((await remove(carol, org, 'dave@example.com')).status).toBe(403);
      expect((await remove(dave, org, 'carol@example.com')).status).toBe(403);
      const res = await remove(bob, org, 'alice@example.com');
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain('Only an owner');
      expect((await remove(mallory, org, 'dave@example.com')).status).toBe(404);
      expect((await members(org)).body.meta.total).toBe(4);
    });

    it('lets any member leave', async () => {
      const org = await team();
      const res = await remove(dave, org, 'dave@example.com');
      expect(res.status).toBe(200);
      expect((await t.call(dave, 'GET', `/v1/organizations/${org}`)).status).toBe(404);
      expect((await remove(carol, org, 'carol@example.com')).status).toBe(200);
    });

    it('keeps the last owner; an owner removes another owner', async () => {
      const org = await team();
      const last = await remove(alice, org, 'alice@example.com');
      expect(last.status).toBe(409);
      expect(last.body.error.code).toBe('CONFLICT');
      expect(last.body.error.message).toContain('last owner');
      // An invited owner cannot act, so it does not count as another owner.
      expect((await invite(alice, org, 'future-owner@example.com', 'owner')).status).toBe(201);
      expect((await remove(alice, org, 'alice@example.com')).status).toBe(409);
      expect((await setRole(alice, org, 'bob@example.com', 'owner')).status).toBe(200);
      expect((await remove(bob, org, 'alice@example.com')).status).toBe(200);
      expect((await remove(bob, org, 'bob@example.com')).status).toBe(409);
    });

    it('never removes a user from their personal organization', async () => {
      expect((await invite(alice, alice.orgId, 'bob@example.com', 'owner')).status).toBe(201);
      const res = await remove(bob, alice.orgId, 'alice@example.com');
      expect(res.status).toBe(409);
      expect(res.body.error.message).toContain('personal organization');
      expect((await remove(alice, alice.orgId, 'alice@example.com')).status).toBe(409);
      expect((await setRole(bob, alice.orgId, 'alice@example.com', 'admin')).status).toBe(409);
      expect((await remove(alice, alice.orgId, 'bob@example.com')).status).toBe(200);
    });

    it("changes a member's role with the same owner rules", async () => {
      const org = await team();
      const promoted = await setRole(bob, org, 'carol@example.com', 'admin');
      expect(promoted.status).toBe(200);
      expect(promoted.body.data).toMatchObject({
        email: 'carol@example.com',
        role: 'admin',
        status: 'active',
      });
      expect((await t.call(carol, 'GET', `/v1/organizations/${org}`)).body.data.role).toBe('admin');
      expect((await setRole(bob, org, 'dave@example.com', 'owner')).status).toBe(403);
      expect((await setRole(bob, org, 'alice@example.com', 'viewer')).status).toBe(403);
      expect((await setRole(dave, org, 'dave@example.com', 'admin')).status).toBe(403);
      expect((await setRole(mallory, org, 'dave@example.com', 'admin')).status).toBe(404);
      expect((await setRole(alice, org, 'nobody@example.com', 'admin')).status).toBe(404);
      const demoteLast = await setRole(alice, org, 'alice@example.com', 'admin');
      expect(demoteLast.status).toBe(409);
      expect((await setRole(alice, org, 'dave@example.com', 'owner')).status).toBe(200);
      expect((await setRole(alice, org, 'alice@example.com', 'admin')).status).toBe(200);
      const bad = await setRole(dave, org, 'bob@example.com', 'root');
      expect(bad.status).toBe(400);
      expect(bad.body.error.details[0].path).toBe('role');
    });

    it('finds members whose e-mail needs encoding in the path', async () => {
      const org = await team();
      const email = 'dev+ci@example.com';
      expect((await invite(alice, org, email, 'viewer')).status).toBe(201);
      expect((await setRole(alice, org, email, 'developer')).body.data.role).toBe('developer');
      expect((await remove(alice, org, email)).status).toBe(200);
      const bad = await t.call(alice, 'DELETE', `/v1/organizations/${org}/members/not-an-email`);
      expect(bad.status).toBe(400);
      expect(bad.body.error.details[0].path).toBe('email');
    });
  });
});
