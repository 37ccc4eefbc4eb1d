import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHostResolver, type HostResolver } from '../../server/features/serving/edge/resolve-host.ts';
import { branchHash } from '../../server/features/deployments/branch-label.ts';
import { markBuilding, markDeploying, markLive } from '../../server/features/deployments/deployment-state.ts';
import { setProjectStatus } from '../../server/features/deployments/projects/set-project-status.ts';
import { onRoutingChange } from '../../server/platform/deps/routing-signal.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { deploymentRow } from '../helpers/edge.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';

/**
 * Branch URLs (docs/edge.md#branch-urls) through the API, the state machine and the edge's
 * resolver, with an hour-long route cache wired to the routing signal as the edge role wires it:
 * whatever changes below changed through the signal, not expiry. The builds are played by hand
 * here, so that their order is the test's (branch-urls-stack.test.ts builds for real).
 */
describe('branch URLs', () => {
  let t: TestApp;
  let alice: TestUser;
  let repo: GitRepo;
  let resolver: HostResolver;
  let off: () => void;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
    repo = createGitRepo({ files: { 'index.html': 'hi' } });
    resolver = createHostResolver(t.deps, { ttlMs: 3_600_000 });
    off = onRoutingChange(t.deps, (projectId) => resolver.invalidate(projectId));
  });
  afterAll(async () => {
    off?.();
    await t.close();
    repo?.remove();
  });
  afterEach(() => resolver.invalidate(null));

  const project = async (name: string) => {
    const res = await t.call(alice, 'POST', '/v1/projects', {
      name,
      repositoryUrl: repo.url,
      organizationId: alice.orgId,
    });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; name: string };
  };
  const deploy = async (projectId: string, branch: string) => {
    const res = await t.call(alice, 'POST', `/v1/projects/${projectId}/deployments`, { branch });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; url: string; branchUrl: string | null; target: string };
  };
  const goLive = async (id: string) => {
    await markBuilding(t.deps, id);
    await markDeploying(t.deps, id, { buildDurationMs: 1, artifactId: `art_${id}` });
    return markLive(t.deps, id, { deployDurationMs: 1 });
  };
  const hostOf = (url: string) => new URL(url).host;
  const serves = async (url: string) => {
    const r = await resolver.resolve(hostOf(url));
    return r.kind === 'target' ? r.target.deploymentId : r.kind;
  };
  const get = async (id: string) => (await t.call(alice, 'GET', `/v1/deployments/${id}`)).body.data;

  it('gives each preview its branch URL, which serves the newest live preview of the branch at once', async () => {
    const p = await project('site');
    const prod = await deploy(p.id, 'main');
    expect(prod).toMatchObject({ target: 'production', branchUrl: null });
    await goLive(prod.id);

    const first = await deploy(p.id, 'feature/login');
    expect(first.target).toBe('preview');
    expect(first.branchUrl).toBe('http://site-git-feature-login.localhost:3001');
    // Nothing of the branch is live yet; the answer is cached for an hour from here on.
    expect(await serves(first.branchUrl!)).toBe('no-branch-deployment');

    const live = await goLive(first.id);
    expect(live.branchUrl).toBe(first.branchUrl);
    expect(await serves(first.branchUrl!)).toBe(first.id);

    const second = await deploy(p.id, 'feature/login');
    expect(second.branchUrl).toBe(first.branchUrl);
    await markBuilding(t.deps, second.id);
    // Still the first until the second is live.
    expect(await serves(first.branchUrl!)).toBe(first.id);
    await markDeploying(t.deps, second.id, { buildDurationMs: 1, artifactId: 'art_2' });
    expect(await serves(first.branchUrl!)).toBe(first.id);
    await markLive(t.deps, second.id, { deployDurationMs: 1 });
    expect(await serves(first.branchUrl!)).toBe(second.id);

    // Another branch has a URL of its own and leaves this one be.
    const other = await deploy(p.id, 'other');
    expect(other.branchUrl).toBe('http://site-git-other.localhost:3001');
    await goLive(other.id);
    expect(await serves(other.branchUrl!)).toBe(other.id);
    expect(await serves(first.branchUrl!)).toBe(second.id);
    // Production, and every deployment's own URL, are as they were.
    expect(await serves('http://site.localhost:3001')).toBe(prod.id);
    expect(await serves(first.url)).toBe(first.id);
    expect((await get(prod.id)).branchUrl).toBeNull();
    expect((await get(first.id)).branchUrl).toBe(first.branchUrl);
    const listed = (await t.call(alice, 'GET', `/v1/projects/${p.id}/deployments?branch=feature/login`)).body;
    expect(listed.data.map((d: { branchUrl: string }) => d.branchUrl)).toEqual([
      first.branchUrl,
      first.branchUrl,
    ]);
  });

  it('is not taken back by an older preview that goes live after a newer one', async () => {
    const p = await project('order');
    const older = await deploy(p.id, 'feature/x');
    const newer = await deploy(p.id, 'feature/x');
    // Queue order decides, not clocks: two API processes' clocks may disagree, or one millisecond
    // hold both.
    await t.deps.db
      .updateTable('deployments')
      .set({ created_at: '2000-01-01T00:00:00.000Z' })
      .where('id', '=', newer.id)
      .execute();
    await goLive(newer.id);
    expect(await serves(newer.branchUrl!)).toBe(newer.id);
    await goLive(older.id);
    expect(await serves(newer.branchUrl!)).toBe(newer.id);
    // The older one still has its own URL.
    expect(await serves(older.url)).toBe(older.id);
    const alias = await t.deps.db
      .selectFrom('branch_aliases')
      .selectAll()
      .where('project_id', '=', p.id)
      .executeTakeFirstOrThrow();
    expect(alias).toMatchObject({
      branch: 'feature/x',
      host: 'order-git-feature-x',
      deployment_id: newer.id,
    });
  });

  it('is left where it is by a promote and a rollback', async () => {
    const p = await project('moves');
    const prod = await deploy(p.id, 'main');
    await goLive(prod.id);
    const a = await deploy(p.id, 'feature/y');
    await goLive(a.id);
    const b = await deploy(p.id, 'feature/y');
    await goLive(b.id);
    expect((await t.call(alice, 'POST', `/v1/deployments/${a.id}/promote`)).status).toBe(200);
    expect(await serves('http://moves.localhost')).toBe(a.id);
    expect(await serves(a.branchUrl!)).toBe(b.id);
    // A promoted preview is production now: its branch URL is the project's.
    expect((await get(a.id)).branchUrl).toBeNull();
    const rollback = await t.call(alice, 'POST', `/v1/deployments/${a.id}/rollback`);
    expect(rollback.status).toBe(201);
    await goLiveRollback(rollback.body.data.id);
    expect(await serves('http://moves.localhost')).toBe(rollback.body.data.id);
    expect(await serves(a.branchUrl!)).toBe(b.id);
  });
  const goLiveRollback = async (id: string) => {
    await markBuilding(t.deps, id);
    await markDeploying(t.deps, id, { buildDurationMs: 0, artifactId: `art_${id}` });
    await markLive(t.deps, id, { deployDurationMs: 1 });
  };

  it("never takes another project's production or deployment host, nor another branch's label", async () => {
    // A project whose production host is what `clash`'s branch main would be called.
    const squatter = await project('clash-git-feature-a');
    const clash = await project('clash');
    const a = await deploy(clash.id, 'feature-a');
    expect(a.branchUrl).toBe(`http://clash-git-feature-a-${branchHash('feature-a')}.localhost:3001`);
    const b = await deploy(clash.id, 'feature/A');
    expect(b.branchUrl).toBe(`http://clash-git-feature-a-${branchHash('feature/A')}.localhost:3001`);
    const c = await deploy(clash.id, 'Feature/B');
    expect(c.branchUrl).toBe('http://clash-git-feature-b.localhost:3001');
    const d = await deploy(clash.id, 'feature-b');
    expect(d.branchUrl).toBe(`http://clash-git-feature-b-${branchHash('feature-b')}.localhost:3001`);
    await goLive(c.id);
    await goLive(d.id);
    expect(await serves(c.branchUrl!)).toBe(c.id);
    expect(await serves(d.branchUrl!)).toBe(d.id);
    expect(await serves('http://clash-git-feature-a.localhost')).toBe('no-production');
    expect(squatter.id).toBeTruthy();

    // A deployment's host of that name is avoided as well.
    const hosted = await project('hosted');
    await t.deps.db
      .updateTable('deployments')
      .set({ host: 'hosted-git-main' })
      .where('id', '=', c.id)
      .execute();
    const e = await deploy(hosted.id, 'main');
    expect(e.target).toBe('production');
    const f = (
      await t.call(alice, 'POST', `/v1/projects/${hosted.id}/deployments`, {
        branch: 'main',
        target: 'preview',
      })
    ).body.data;
    expect(f.branchUrl).toBe(`http://hosted-git-main-${branchHash('main')}.localhost:3001`);

    // And a project made later does not get a branch URL's label as its production host.
    const later = await t.call(alice, 'POST', '/v1/projects', {
      name: 'clash-git-feature-b',
      repositoryUrl: repo.url,
      organizationId: alice.orgId,
    });
    expect(later.status).toBe(201);
    const row = await t.deps.db
      .selectFrom('projects')
      .select('production_host')
      .where('id', '=', later.body.data.id)
      .executeTakeFirstOrThrow();
    expect(row.production_host).not.toBe('clash-git-feature-b');
    expect(await serves(c.branchUrl!)).toBe(c.id);
  });

  it('gives a preview queued before branch URLs existed one when it goes live, after the previews queued since', async () => {
    const p = await project('upgraded');
    const now = t.deps.clock.now().toISOString();
    // As migration 024 leaves a preview that was queued before it: no label, no number.
    const before = deploymentRow(p.id, now, { status: 'queued', target: 'preview', branch: 'old/one' });
    await t.deps.db.insertInto('deployments').values(before).execute();
    await goLive(before.id);
    const label = 'http://upgraded-git-old-one.localhost:3001';
    expect((await get(before.id)).branchUrl).toBe(label);
    expect(await serves(label)).toBe(before.id);
    const next = await deploy(p.id, 'old/one');
    expect(next.branchUrl).toBe(label);
    await goLive(next.id);
    expect(await serves(label)).toBe(next.id);
  });

  it('follows a rename, answers suspended for a suspended project, and is gone with a deleted one', async () => {
    const p = await project('before');
    const d = await deploy(p.id, 'feature/z');
    await goLive(d.id);
    expect(await serves(d.branchUrl!)).toBe(d.id);

    expect((await t.call(alice, 'PATCH', `/v1/projects/${p.id}`, { name: 'after' })).status).toBe(200);
    const renamed = (await get(d.id)).branchUrl;
    expect(renamed).toBe('http://after-git-feature-z.localhost:3001');
    expect(await serves(d.branchUrl!)).toBe('unknown');
    expect(await serves(renamed)).toBe(d.id);

    await setProjectStatus(t.deps, p.id, 'suspended');
    expect(await serves(renamed)).toBe('suspended');
    await setProjectStatus(t.deps, p.id, 'active');
    expect(await serves(renamed)).toBe(d.id);

    expect((await t.call(alice, 'DELETE', `/v1/projects/${p.id}`)).status).toBe(200);
    expect(await serves(renamed)).toBe('unknown');
    const left = await t.deps.db
      .selectFrom('branch_aliases')
      .select('host')
      .where('project_id', '=', p.id)
      .execute();
    expect(left).toEqual([]);
    // The label is free again: a new project of that name gets it.
    const again = await project('after');
    expect((await deploy(again.id, 'feature/z')).branchUrl).toBe(renamed);
  });
});
