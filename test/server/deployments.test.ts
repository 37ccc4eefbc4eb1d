import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBuildSpec } from '../../server/platform/store/build-spec.ts';
import { newId } from '../../server/core/ids.ts';
import {
  markBuilding,
  markDeploying,
  markFailed,
  markLive,
} from '../../server/features/deployments/deployment-state.ts';
import { setProjectStatus } from '../../server/features/deployments/projects/set-project-status.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { readDeliveries } from '../helpers/deliveries.ts';

describe('deployments', () => {
  let t: TestApp;
  let clock: ManualClock;
  let alice: TestUser;
  let mallory: TestUser;
  let viewer: TestUser;
  let developer: TestUser;

  beforeAll(async () => {
    clock = new ManualClock();
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    mallory = await t.user('mallory@example.com');
    viewer = await t.user('viewer@example.com');
    developer = await t.user('developer@example.com');
    await addMember(alice.orgId, viewer, 'viewer');
    await addMember(alice.orgId, developer, 'developer');
    // Alice makes well over the free plan's 100 requests an hour in this file.
    await t.deps.db
      .updateTable('organizations')
      .set({ plan: 'enterprise' })
      .where('id', '=', alice.orgId)
      .execute();
  });
  afterAll(() => t.close());

  async function addMember(orgId: string, user: TestUser, role: 'viewer' | 'developer') {
    const now = clock.now().toISOString();
    await t.deps.db
      .insertInto('memberships')
      .values({
        id: newId('mem'),
        organization_id: orgId,
        email: user.email,
        user_id: user.userId,
        role,
        invited_at: now,
        joined_at: now,
      })
      .execute();
  }

  /** The build spec stored with a deployment when it was queued. */
  async function specOf(id: string) {
    const row = await t.deps.db
      .selectFrom('deployments')
      .select('build_spec')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return decodeBuildSpec(id, row.build_spec);
  }

  async function project(name: string, branch = 'main'): Promise<string> {
    const res = await t.call(alice, 'POST', '/v1/projects', {
      name,
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
      branch,
    });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  }

  /** Creates a deployment through the API, one second after the previous one. */
  async function deploy(projectId: string, body: Record<string, unknown> = {}, user = alice) {
    clock.advance(1000);
    const res = await t.call(user, 'POST', `/v1/projects/${projectId}/deployments`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string; [k: string]: unknown };
  }

  /** Drives a deployment through the state machine to live, as the builder would. */
  async function goLive(id: string, artifactId = `art-${id}`) {
    clock.advance(1000);
    await markBuilding(t.deps, id, {
      commitHash: 'ABCDEF1234567',
      commitMessage: 'Fix',
      author: 'a@example.com',
    });
    await markDeploying(t.deps, id, { buildDurationMs: 1200, artifactId });
    return markLive(t.deps, id, { deployDurationMs: 300 });
  }

  const getProject = async (id: string) => (await t.call(alice, 'GET', `/v1/projects/${id}`)).body.data;

  describe('create', () => {
    it('keeps "cache": false for the build, and names a cache that is not a boolean', async () => {
      const pid = await project('nocache');
      const res = await t.call(alice, 'POST', `/v1/projects/${pid}/deployments`, { cache: false });
      expect(res.status).toBe(201);
      expect((await specOf(res.body.data.id)).cache).toBeNull();
      const bad = await t.call(alice, 'POST', `/v1/projects/${pid}/deployments`, { cache: 'no' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.map((d: { path: string }) => d.path)).toEqual(['cache']);
    });

    it('answers 201 with a queued production deployment of the project branch and enqueues its build', async () => {
      const pid = await project('web');
      const res = await t.call(alice, 'POST', `/v1/projects/${pid}/deployments`, { message: 'first' });
      expect(res.status).toBe(201);
      expect(res.body.success).toBe(true);
      const d = res.body.data;
      expect(d).toEqual({
        id: expect.stringMatching(/^dpl_[a-z0-9]{20}$/),
        projectId: pid,
        status: 'queued',
        target: 'production',
        branch: 'main',
        commitHash: null,
        commitMessage: null,
        author: null,
        message: 'first',
        buildDurationMs: null,
        deployDurationMs: null,
        url: expect.stringMatching(/^http:\/\/web-[a-z0-9]{8}\.localhost:3001$/),
        branchUrl: null,
        errorMessage: null,
        rollbackFrom: null,
        rollbackTo: null,
        createdAt: clock.now().toISOString(),
        readyAt: null,
        promotedAt: null,
        source: 'git',
        framework: null,
        dashboardUrl: `http://localhost:3000/deployments/${d.id}`,
        // The tests' projects keep previews open (SLIPWAY_DEFAULT_PROTECTION=none).
        protected: false,
      });
      const jobs = await t.deps.db
        .selectFrom('jobs')
        .selectAll()
        .where('kind', '=', 'deployment.build')
        .execute();
      const job = jobs.find((j) => (JSON.parse(j.payload) as { deploymentId: string }).deploymentId === d.id);
      expect(job).toMatchObject({ status: 'queued', payload: JSON.stringify({ deploymentId: d.id }) });
      const row = await t.deps.db
        .selectFrom('deployments')
        .selectAll()
        .where('id', '=', d.id)
        .executeTakeFirstOrThrow();
      expect(row.created_by).toBe(alice.userId);
    });

    it('defaults other branches to preview, honours an explicit target and pins a commit', async () => {
      const pid = await project('branchy', 'trunk');
      expect(await deploy(pid)).toMatchObject({ branch: 'trunk', target: 'production' });
      expect(await deploy(pid, { branch: 'feature/x' })).toMatchObject({
        branch: 'feature/x',
        target: 'preview',
      });
      expect(await deploy(pid, { branch: 'feature/x', target: 'production' })).toMatchObject({
        target: 'production',
      });
      const pinned = await deploy(pid, { commitHash: 'ABCDEF0' });
      expect(pinned.commitHash).toBe('abcdef0');
      expect((await specOf(pinned.id)).source).toEqual({ kind: 'git', ref: 'trunk', commit: 'abcdef0' });
    });

    it('gives every deployment its own host, within 63 characters for long project names', async () => {
      const name = 'a'.repeat(49) + '-' + 'b'.repeat(13);
      const pid = await project(name);
      const a = await deploy(pid);
      const b = await deploy(pid);
      expect(a.url).not.toBe(b.url);
      const label = new URL(a.url as string).hostname.split('.')[0]!;
      expect(label).toMatch(/^a{49}-[a-z0-9]{8}$/);
    });

    it('names each bad field', async () => {
      const pid = await project('bad-body');
      const res = await t.call(alice, 'POST', `/v1/projects/${pid}/deployments`, {
        branch: '-x',
        commitHash: 'xyz',
        target: 'staging',
        message: 'm'.repeat(1001),
        extra: true,
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      const paths = res.body.error.details.map((d: { path: string }) => d.path).sort();
      expect(paths).toEqual(['branch', 'commitHash', 'extra', 'message', 'target']);
    });

    it('needs a token, a developer role, an accessible project and an active one', async () => {
      const pid = await project('guarded');
      const url = `/v1/projects/${pid}/deployments`;
      const none = await t.call(null, 'POST', url, {});
      expect(none.status).toBe(401);
      expect(none.body.error.code).toBe('UNAUTHORIZED');
      const asViewer = await t.call(viewer, 'POST', url, {});
      expect(asViewer.status).toBe(403);
      expect(asViewer.body.error.code).toBe('FORBIDDEN');
      expect((await t.call(developer, 'POST', url, {})).status).toBe(201);
      const stranger = await t.call(mallory, 'POST', url, {});
      expect(stranger.status).toBe(404);
      expect(stranger.body.error.code).toBe('NOT_FOUND');
      expect(
        (await t.call(alice, 'POST', '/v1/projects/prj_doesnotexist000000/deployments', {})).status,
      ).toBe(404);

      await setProjectStatus(t.deps, pid, 'suspended');
      const suspended = await t.call(alice, 'POST', url, {});
      expect(suspended.status).toBe(403);
      expect(suspended.body.error.message).toMatch(/suspended/);
      expect((await t.call(alice, 'GET', url)).status).toBe(200);
      await setProjectStatus(t.deps, pid, 'active');
    });

    it('records deployment.created and later events for subscribed webhooks, in the same transaction', async () => {
      const pid = await project('hooked');
      const now = clock.now().toISOString();
      const webhookId = newId('whk');
      await t.deps.db
        .insertInto('webhooks')
        .values({
          id: webhookId,
          project_id: pid,
          url: 'http://127.0.0.1:9/hook',
          events: JSON.stringify(['deployment.created', 'deployment.success']),
          secret_ciphertext: t.deps.cipher.encrypt('s'.repeat(32)),
          active: 1,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const d = await deploy(pid, { branch: 'main' });
      await goLive(d.id);
      const deliveries = await readDeliveries(t.deps.db, { webhookId });
      expect(deliveries.map((x) => x.event)).toEqual(['deployment.created', 'deployment.success']);
      expect(deliveries.every((x) => x.status === 'pending')).toBe(true);
      const created = JSON.parse(deliveries[0]!.payload);
      expect(created).toEqual({
        event: 'deployment.created',
        timestamp: expect.any(String),
        data: {
          deploymentId: d.id,
          projectId: pid,
          status: 'queued',
          url: d.url,
          target: 'production',
          branch: 'main',
          commitHash: null,
        },
      });
      expect(JSON.parse(deliveries[1]!.payload).data).toMatchObject({
        deploymentId: d.id,
        status: 'live',
        commitHash: 'abcdef1234567',
      });
    });
  });

  describe('list and get', () => {
    let pid: string;
    let ids: string[];

    beforeAll(async () => {
      pid = await project('listed');
      const a = await deploy(pid);
      const b = await deploy(pid, { branch: 'feature' });
      const c = await deploy(pid, { commitHash: 'deadbeef' });
      ids = [a.id, b.id, c.id];
      await goLive(a.id);
      await markFailed(t.deps, b.id, 'npm run build exited with code 1');
    });

    it('lists newest first with meta and pages', async () => {
      const res = await t.call(alice, 'GET', `/v1/projects/${pid}/deployments`);
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ page: 1, limit: 10, total: 3, next: null });
      expect(res.body.data.map((d: { id: string }) => d.id)).toEqual([...ids].reverse());
      const page2 = await t.call(alice, 'GET', `/v1/projects/${pid}/deployments?limit=2&page=2`);
      expect(page2.body.meta).toEqual({ page: 2, limit: 2, total: 3, next: null });
      expect(page2.body.data.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
    });

    it('filters by status, branch, target and commit prefix', async () => {
      const q = async (query: string) =>
        (await t.call(alice, 'GET', `/v1/projects/${pid}/deployments?${query}`)).body.data.map(
          (d: { id: string }) => d.id,
        );
      expect(await q('status=live')).toEqual([ids[0]]);
      expect(await q('status=failed')).toEqual([ids[1]]);
      expect(await q('branch=feature')).toEqual([ids[1]]);
      expect(await q('target=preview')).toEqual([ids[1]]);
      expect(await q('target=production')).toEqual([ids[2], ids[0]]);
      expect(await q('commitHash=ABCDEF1')).toEqual([ids[0]]);
      expect(await q('commitHash=deadbeef')).toEqual([ids[2]]);
      expect(await q('status=queued&branch=feature')).toEqual([]);
    });

    it('rejects bad queries', async () => {
      for (const query of [
        'status=bogus',
        'target=staging',
        'commitHash=xyz',
        'limit=0',
        'limit=101',
        'page=0',
        'nope=1',
      ]) {
        const res = await t.call(alice, 'GET', `/v1/projects/${pid}/deployments?${query}`);
        expect(res.status, query).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
      }
    });

    it('gets one deployment, for members only', async () => {
      const res = await t.call(viewer, 'GET', `/v1/deployments/${ids[1]}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id: ids[1],
        status: 'failed',
        target: 'preview',
        errorMessage: 'npm run build exited with code 1',
      });
      expect((await t.call(null, 'GET', `/v1/deployments/${ids[1]}`)).status).toBe(401);
      const stranger = await t.call(mallory, 'GET', `/v1/deployments/${ids[1]}`);
      expect(stranger.status).toBe(404);
      expect(stranger.body.error.message).toBe(`Deployment ${ids[1]} not found`);
      expect((await t.call(mallory, 'GET', `/v1/projects/${pid}/deployments`)).status).toBe(404);
      expect((await t.call(alice, 'GET', '/v1/deployments/dpl_doesnotexist000000')).status).toBe(404);
    });

    it('hides the deployments of a deleted project', async () => {
      const gone = await project('gone');
      const d = await deploy(gone);
      expect((await t.call(alice, 'DELETE', `/v1/projects/${gone}`)).status).toBe(200);
      expect((await t.call(alice, 'GET', `/v1/deployments/${d.id}`)).status).toBe(404);
      expect((await t.call(alice, 'GET', `/v1/projects/${gone}/deployments`)).status).toBe(404);
      expect((await t.call(alice, 'POST', `/v1/projects/${gone}/deployments`, {})).status).toBe(404);
    });
  });

  describe('state machine', () => {
    it('goes queued -> building -> deploying -> live and switches production', async () => {
      const pid = await project('states');
      const d = await deploy(pid);
      clock.advance(500);
      const building = await markBuilding(t.deps, d.id, {
        commitHash: '0123456789ABCDEF0123456789ABCDEF01234567',
        commitMessage: 'Add page',
        author: 'dev@example.com',
      });
      expect(building).toMatchObject({
        status: 'building',
        commitHash: '0123456789abcdef0123456789abcdef01234567',
        commitMessage: 'Add page',
        author: 'dev@example.com',
      });
      const deploying = await markDeploying(t.deps, d.id, { buildDurationMs: 4321.4, artifactId: 'art1' });
      expect(deploying).toMatchObject({ status: 'deploying', buildDurationMs: 4321 });
      expect((await getProject(pid)).productionDeploymentId).toBeNull();
      clock.advance(700);
      const live = await markLive(t.deps, d.id, { deployDurationMs: 700 });
      expect(live).toMatchObject({
        status: 'live',
        deployDurationMs: 700,
        readyAt: clock.now().toISOString(),
      });
      const row = await t.deps.db
        .selectFrom('deployments')
        .selectAll()
        .where('id', '=', d.id)
        .executeTakeFirstOrThrow();
      expect(row.artifact_id).toBe('art1');
      expect(row.started_at).not.toBeNull();
      const p = await getProject(pid);
      expect(p.productionDeploymentId).toBe(d.id);
      expect(p.deploymentUrl).toMatch(/^http:\/\/states\.localhost:3001$/);
      expect((await t.call(alice, 'GET', `/v1/deployments/${d.id}`)).body.data.status).toBe('live');
    });

    it('leaves production alone when a preview goes live', async () => {
      const pid = await project('previews');
      const prod = await deploy(pid);
      await goLive(prod.id);
      const preview = await deploy(pid, { branch: 'feature' });
      await goLive(preview.id);
      expect((await getProject(pid)).productionDeploymentId).toBe(prod.id);
    });

    it('refuses illegal transitions with CONFLICT and unknown deployments with NOT_FOUND', async () => {
      const pid = await project('illegal');
      const d = await deploy(pid);
      await expect(markLive(t.deps, d.id, { deployDurationMs: 1 })).rejects.toMatchObject({
        code: 'CONFLICT',
        message: `Deployment ${d.id} is queued; it can become live only from deploying`,
      });
      await expect(
        markDeploying(t.deps, d.id, { buildDurationMs: 1, artifactId: 'x' }),
      ).rejects.toMatchObject({
        code: 'CONFLICT',
      });
      await goLive(d.id);
      await expect(markBuilding(t.deps, d.id)).rejects.toMatchObject({ code: 'CONFLICT' });
      await expect(markFailed(t.deps, d.id, 'late')).rejects.toMatchObject({ code: 'CONFLICT' });
      await expect(markBuilding(t.deps, 'dpl_doesnotexist000000')).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });

      for (const steps of [0, 1, 2]) {
        const f = await deploy(pid);
        if (steps >= 1) await markBuilding(t.deps, f.id);
        if (steps >= 2) await markDeploying(t.deps, f.id, { buildDurationMs: 1, artifactId: 'x' });
        const failed = await markFailed(t.deps, f.id, 'boom');
        expect(failed).toMatchObject({ status: 'failed', errorMessage: 'boom' });
        await expect(markFailed(t.deps, f.id, 'again')).rejects.toMatchObject({ code: 'CONFLICT' });
        await expect(markBuilding(t.deps, f.id)).rejects.toMatchObject({ code: 'CONFLICT' });
      }
      expect((await getProject(pid)).productionDeploymentId).toBe(d.id);
    });

    it('lets exactly one of two racing transitions win', async () => {
      const pid = await project('racing');
      const d = await deploy(pid);
      const results = await Promise.allSettled([markBuilding(t.deps, d.id), markBuilding(t.deps, d.id)]);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    });
  });

  describe('promote', () => {
    it('makes a live preview production at once and refuses anything else', async () => {
      const pid = await project('promo');
      const prod = await deploy(pid);
      await goLive(prod.id);
      const preview = await deploy(pid, { branch: 'feature' });
      const url = `/v1/deployments/${preview.id}/promote`;

      const early = await t.call(alice, 'POST', url);
      expect(early.status).toBe(409);
      expect(early.body.error.message).toMatch(/is queued; only a live deployment can be promoted/);

      await goLive(preview.id);
      expect((await t.call(viewer, 'POST', url)).status).toBe(403);
      expect((await t.call(mallory, 'POST', url)).status).toBe(404);
      expect((await t.call(null, 'POST', url)).status).toBe(401);
      expect((await t.call(alice, 'POST', url, { target: 'production' })).status).toBe(400);

      clock.advance(1000);
      const res = await t.call(developer, 'POST', url);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id: preview.id,
        status: 'live',
        target: 'production',
        promotedAt: clock.now().toISOString(),
      });
      const p = await getProject(pid);
      expect(p.productionDeploymentId).toBe(preview.id);

      const again = await t.call(alice, 'POST', url);
      expect(again.status).toBe(409);
      expect(again.body.error.message).toBe(`Deployment ${preview.id} is already the production deployment`);

      // An earlier production deployment that went live can be made production again.
      clock.advance(1000);
      const back = await t.call(alice, 'POST', `/v1/deployments/${prod.id}/promote`);
      expect(back.status).toBe(200);
      expect(back.body.data).toMatchObject({
        id: prod.id,
        target: 'production',
        promotedAt: clock.now().toISOString(),
      });
      expect((await getProject(pid)).productionDeploymentId).toBe(prod.id);
    });
  });

  it('records deployment.promoted for subscribed webhooks', async () => {
    const pid = await project('promo-hook');
    const now = clock.now().toISOString();
    const webhookId = newId('whk');
    await t.deps.db
      .insertInto('webhooks')
      .values({
        id: webhookId,
        project_id: pid,
        url: 'http://127.0.0.1:9/hook',
        events: JSON.stringify(['deployment.promoted']),
        secret_ciphertext: t.deps.cipher.encrypt('s'.repeat(32)),
        active: 1,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const preview = await deploy(pid, { branch: 'feature' });
    await goLive(preview.id);
    expect((await t.call(alice, 'POST', `/v1/deployments/${preview.id}/promote`)).status).toBe(200);
    const deliveries = await readDeliveries(t.deps.db, { webhookId });
    expect(deliveries.map((d) => d.event)).toEqual(['deployment.promoted']);
    expect(JSON.parse(deliveries[0]!.payload).data).toMatchObject({
      deploymentId: preview.id,
      status: 'live',
      target: 'production',
    });
  });

  describe('rollback', () => {
    it('creates a queued production deployment reusing the previous live build', async () => {
      const pid = await project('rolly');
      const first = await deploy(pid);
      const firstLive = await goLive(first.id, 'art-first');
      const second = await deploy(pid);
      await goLive(second.id, 'art-second');
      expect((await getProject(pid)).productionDeploymentId).toBe(second.id);

      const noEarlier = await t.call(alice, 'POST', `/v1/deployments/${first.id}/rollback`);
      expect(noEarlier.status).toBe(409);
      expect(noEarlier.body.error.message).toMatch(/nothing to roll back to/);

      expect((await t.call(viewer, 'POST', `/v1/deployments/${second.id}/rollback`)).status).toBe(403);
      expect((await t.call(mallory, 'POST', `/v1/deployments/${second.id}/rollback`)).status).toBe(404);
      expect((await t.call(null, 'POST', `/v1/deployments/${second.id}/rollback`)).status).toBe(401);

      clock.advance(1000);
      const res = await t.call(alice, 'POST', `/v1/deployments/${second.id}/rollback`);
      expect(res.status).toBe(201);
      const rb = res.body.data;
      expect(rb).toMatchObject({
        status: 'queued',
        target: 'production',
        rollbackFrom: second.id,
        branch: 'main',
        commitHash: firstLive.commitHash,
        commitMessage: 'Fix',
        author: 'a@example.com',
        createdAt: clock.now().toISOString(),
      });
      expect(rb.id).not.toBe(first.id);
      expect(rb.url).not.toBe(first.url);
      const row = await t.deps.db
        .selectFrom('deployments')
        .selectAll()
        .where('id', '=', rb.id)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ source_deployment_id: first.id, artifact_id: 'art-first' });
      const job = await t.deps.db
        .selectFrom('jobs')
        .selectAll()
        .where('kind', '=', 'deployment.build')
        .where('payload', '=', JSON.stringify({ deploymentId: rb.id }))
        .executeTakeFirst();
      expect(job?.status).toBe('queued');
      // Production only moves when the rollback deployment goes live.
      expect((await getProject(pid)).productionDeploymentId).toBe(second.id);
      await goLive(rb.id);
      expect((await getProject(pid)).productionDeploymentId).toBe(rb.id);
    });

    it('rolls back to any earlier production deployment by id, saying from which and to which', async () => {
      const pid = await project('history');
      const [a, b, c] = [await deploy(pid), await deploy(pid), await deploy(pid)];
      await goLive(a.id, 'art-a');
      clock.advance(1000);
      await goLive(b.id, 'art-b');
      clock.advance(1000);
      await goLive(c.id, 'art-c');
      const preview = await deploy(pid, { branch: 'feature' });
      await goLive(preview.id);
      const url = `/v1/deployments/${c.id}/rollback`;

      const bad = await t.call(alice, 'POST', url, { to: 'nope', extra: 1 });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['extra', 'to']);
      const foreign = await t.call(alice, 'POST', url, { to: 'dpl_doesnotexist' });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.message).toBe('Deployment dpl_doesnotexist of this project not found');
      const toPreview = await t.call(alice, 'POST', url, { to: preview.id });
      expect(toPreview.status).toBe(409);
      expect(toPreview.body.error.message).toContain(
        'a preview that was never production; promote it instead',
      );
      const toItself = await t.call(alice, 'POST', url, { to: c.id });
      expect(toItself.body.error.message).toContain('is the one rolled back from');
      const later = await t.call(alice, 'POST', `/v1/deployments/${b.id}/rollback`, { to: c.id });
      expect(later.body.error.message).toBe(
        `Deployment ${c.id} went live after ${b.id}; roll back only to an earlier deployment`,
      );

      const res = await t.call(alice, 'POST', url, { to: a.id });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        rollbackFrom: c.id,
        rollbackTo: a.id,
        message: `Rollback from ${c.id} to ${a.id}`,
      });
      const row = await t.deps.db
        .selectFrom('deployments')
        .select(['artifact_id', 'source_deployment_id'])
        .where('id', '=', res.body.data.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ artifact_id: 'art-a', source_deployment_id: a.id });
      // Without `to`, as before: the one live just before.
      const plain = await t.call(alice, 'POST', url);
      expect(plain.body.data).toMatchObject({ rollbackFrom: c.id, rollbackTo: b.id });
      expect((await t.call(alice, 'GET', `/v1/deployments/${c.id}`)).body.data.rollbackTo).toBeNull();
    });

    it('refuses previews and rolls back from a failed production deployment to the last live one', async () => {
      const pid = await project('rolly-two');
      const a = await deploy(pid);
      await goLive(a.id);
      const b = await deploy(pid);
      await goLive(b.id);
      const preview = await deploy(pid, { branch: 'feature' });
      const res = await t.call(alice, 'POST', `/v1/deployments/${preview.id}/rollback`);
      expect(res.status).toBe(409);
      expect(res.body.error.message).toMatch(/preview deployment/);

      const broken = await deploy(pid);
      await markFailed(t.deps, broken.id, 'boom');
      const rb = await t.call(alice, 'POST', `/v1/deployments/${broken.id}/rollback`);
      expect(rb.status).toBe(201);
      const row = await t.deps.db
        .selectFrom('deployments')
        .select('source_deployment_id')
        .where('id', '=', rb.body.data.id)
        .executeTakeFirstOrThrow();
      expect(row.source_deployment_id).toBe(b.id);
    });

    it('counts a promoted preview from its promotion', async () => {
      const pid = await project('rolly-three');
      const a = await deploy(pid);
      await goLive(a.id);
      const p = await deploy(pid, { branch: 'feature' });
      await goLive(p.id);
      const b = await deploy(pid);
      await goLive(b.id);
      clock.advance(1000);
      expect((await t.call(alice, 'POST', `/v1/deployments/${p.id}/promote`)).status).toBe(200);
      const rb = await t.call(alice, 'POST', `/v1/deployments/${p.id}/rollback`);
      expect(rb.status).toBe(201);
      const row = await t.deps.db
        .selectFrom('deployments')
        .select('source_deployment_id')
        .where('id', '=', rb.body.data.id)
        .executeTakeFirstOrThrow();
      expect(row.source_deployment_id).toBe(b.id);
    });
  });
});
