import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBuildSpec } from '../../server/platform/store/build-spec.ts';
import { markBuilding, markDeploying, markLive } from '../../server/features/deployments/deployment-state.ts';
import { getMetricSeries } from '../../server/features/monitoring/get-metric-series.ts';
import { recordRequests } from '../../server/features/monitoring/record-requests.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { dashboardSession } from '../helpers/dashboard-session.ts';
import { addMember } from '../helpers/members.ts';

const NOW = '2026-11-26T12:30:00.000Z';

/**
 * The dashboard deploys: New project, the Deploy form, the project cards' newest deployment,
 * rollback and promotion rows marked, the deployment's status for the live page, and metrics as
 * time series. Through inject(), on SQLite and PostgreSQL.
 */
describe('dashboard: deploying from it', () => {
  let t: TestApp;
  let alice: TestUser;
  let viewer: TestUser;
  let orgName: string;
  const clock = new ManualClock(NOW);

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    viewer = await t.user('viewer@example.com');
    await addMember(t, alice.orgId, viewer, 'viewer');
    await t.deps.db
      .updateTable('organizations')
      .set({ plan: 'enterprise' })
      .where('id', '=', alice.orgId)
      .execute();
    orgName = (await t.call(alice, 'GET', `/v1/organizations/${alice.orgId}`)).body.data.name;
  });
  afterAll(() => t.close());

  const projectNamed = async (name: string) =>
    (await t.call(alice, 'GET', `/v1/projects?org=${alice.orgId}&limit=100`)).body.data.find(
      (p: { name: string }) => p.name === name,
    );
  const deploymentsOf = async (projectId: string) =>
    (await t.call(alice, 'GET', `/v1/projects/${projectId}/deployments?limit=100`)).body.data;

  /** Starts a deployment a second after the last one, so "newest" is certain. */
  async function deploy(projectId: string, body: Record<string, string> = {}): Promise<string> {
    clock.advance(1000);
    const res = await t.call(alice, 'POST', `/v1/projects/${projectId}/deployments`, body);
    expect(res.status).toBe(201);
    return res.body.data.id;
  }

  async function live(id: string) {
    await markBuilding(t.deps, id, {
      commitHash: 'abcdef1234567890',
      commitMessage: 'Ship it',
      author: 'a@example.com',
    });
    await markDeploying(t.deps, id, { buildDurationMs: 10, artifactId: `art-${id}` });
    await markLive(t.deps, id, { deployDurationMs: 10 });
  }

  it('makes a project from a repository and starts its first deployment, whose page follows it', async () => {
    const s = await dashboardSession(t, alice);
    const form = await s.get(`/new?org=${orgName}`);
    expect(form.statusCode).toBe(200);
    expect(form.body).toMatch(new RegExp(`<option\\s+value="${alice.orgId}"\\s+selected\\s*>`));
    const res = await s.post('/new', {
      organizationId: alice.orgId,
      name: 'from-git',
      source: 'git',
      repositoryUrl: 'https://github.com/acme/from-git.git',
      branch: 'main',
      deploy: 'on',
    });
    expect(res.statusCode, res.body).toBe(303);
    const project = await projectNamed('from-git');
    expect(project.repositoryUrl).toBe('https://github.com/acme/from-git.git');
    const [first] = await deploymentsOf(project.id);
    expect(first).toMatchObject({ target: 'production', branch: 'main', status: 'queued' });
    expect(res.headers.location).toBe(`/deployments/${first.id}?done=created`);
    const page = await s.get(String(res.headers.location));
    expect(page.body).toContain('Project created: its first deployment has started');
    // Not final yet: the page says where its script reads the status, and what to do without one.
    expect(page.body).toContain(`data-live-status="/deployments/${first.id}/status"`);
    expect(page.body).toContain('<noscript');
    const status = await s.get(`/deployments/${first.id}/status`);
    expect(status.headers['content-type']).toMatch(/^application\/json/);
    expect(status.json()).toEqual({ id: first.id, status: 'queued', errorMessage: null });
    await markBuilding(t.deps, first.id, { commitHash: 'a'.repeat(40), commitMessage: 'x' });
    expect((await s.get(`/deployments/${first.id}/status`)).json().status).toBe('building');
  });

  it('makes an empty project for uploads, whose page shows the command that deploys a folder to it', async () => {
    const s = await dashboardSession(t, alice);
    const res = await s.post('/new', {
      organizationId: alice.orgId,
      name: 'uploads',
      source: 'upload',
      // Typed before choosing "Empty": ignored.
      repositoryUrl: 'https://github.com/acme/ignored.git',
      branch: 'main',
    });
    expect(res.statusCode, res.body).toBe(303);
    const project = await projectNamed('uploads');
    expect(project.repositoryUrl).toBeNull();
    expect(res.headers.location).toBe(`/projects/${project.id}?done=created`);
    expect(await deploymentsOf(project.id)).toEqual([]);
    const page = await s.get(String(res.headers.location));
    expect(page.body).toContain('Project created.');
    expect(page.body).toMatch(
      new RegExp(`<code>npx slipway deploy &lt;folder&gt; --project uploads --org ${orgName} --prod</code>`),
    );
    expect(page.body).not.toContain('Deploy now');
  });

  it('names what is wrong with a new project, keeps what was typed, and makes nothing', async () => {
    const s = await dashboardSession(t, alice);
    const bad = await s.post('/new', { organizationId: alice.orgId, name: 'Bad Name', source: 'upload' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/role="alert">Invalid request: name: /);
    expect(bad.body).toContain('value="Bad Name"');
    const noRepo = await s.post('/new', { organizationId: alice.orgId, name: 'no-repo', source: 'git' });
    expect(noRepo.statusCode).toBe(400);
    expect(noRepo.body).toContain('repositoryUrl: is required for a project built from a repository');
    const taken = await s.post('/new', { organizationId: alice.orgId, name: 'uploads', source: 'upload' });
    expect(taken.statusCode).toBe(409);
    expect(taken.body).toContain('A project named &quot;uploads&quot; already exists');
    const forged = await s.post(
      '/new',
      { organizationId: alice.orgId, name: 'forged', source: 'upload' },
      false,
    );
    expect(forged.statusCode).toBe(403);
    expect(await projectNamed('no-repo')).toBeUndefined();
    expect(await projectNamed('forged')).toBeUndefined();
    // A viewer is offered no organization to make one in, and the API refuses a hand-made form.
    const v = await dashboardSession(t, viewer);
    const own = (await t.call(viewer, 'GET', '/v1/user')).body.data.organizations.map(
      (o: { id: string }) => o.id,
    );
    const page = await v.get('/new');
    expect(page.body).not.toContain(`value="${alice.orgId}"`);
    expect(page.body).toContain(`value="${own.find((id: string) => id !== alice.orgId)}"`);
    const refused = await v.post('/new', {
      organizationId: alice.orgId,
      name: 'by-viewer',
      source: 'upload',
    });
    expect(refused.statusCode).toBe(403);
    expect(await projectNamed('by-viewer')).toBeUndefined();
  });

  it('deploys a branch or a commit, with or without the build cache, from the project page', async () => {
    const s = await dashboardSession(t, alice);
    const project = await projectNamed('from-git');
    const page = await s.get(`/projects/${project.id}`);
    expect(page.body).toContain(`action="/projects/${project.id}/deployments"`);
    expect(page.body).toMatch(/<input type="checkbox" name="cache"\s+checked/);

    // The box left ticked: the branch's head, with the cache.
    const withCache = await s.post(`/projects/${project.id}/deployments`, { branch: 'main', cache: 'on' });
    expect(withCache.statusCode).toBe(303);
    const a = /^\/deployments\/(dpl_\w+)\?done=deploy$/.exec(String(withCache.headers.location))![1]!;
    const rowA = await t.deps.db
      .selectFrom('deployments')
      .selectAll()
      .where('id', '=', a)
      .executeTakeFirstOrThrow();
    expect(rowA.target).toBe('production');
    expect(decodeBuildSpec(a, rowA.build_spec).cache).not.toBeNull();

    // A commit of another branch, the box unticked: a preview of that commit, built from scratch.
    const commit = '0123456789abcdef0123456789abcdef01234567';
    const fresh = await s.post(`/projects/${project.id}/deployments`, {
      branch: 'feature/x',
      commitHash: commit,
    });
    expect(fresh.statusCode).toBe(303);
    const b = /^\/deployments\/(dpl_\w+)\?done=deploy$/.exec(String(fresh.headers.location))![1]!;
    const rowB = await t.deps.db
      .selectFrom('deployments')
      .selectAll()
      .where('id', '=', b)
      .executeTakeFirstOrThrow();
    expect(rowB).toMatchObject({ target: 'preview', branch: 'feature/x', commit_hash: commit });
    const spec = decodeBuildSpec(b, rowB.build_spec);
    expect(spec.cache).toBeNull();
    expect(spec.source).toMatchObject({ kind: 'git', ref: 'feature/x', commit });
    expect((await s.get(String(fresh.headers.location))).body).toContain('Deployment started');

    // A bad commit: the API's words, the form open with what was typed, nothing queued.
    const before = (await deploymentsOf(project.id)).length;
    const bad = await s.post(`/projects/${project.id}/deployments`, { branch: 'main', commitHash: 'xyz' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('commitHash: must be 7 to 40 hexadecimal characters');
    expect(bad.body).toMatch(/<details class="deploy"\s+open>/);
    expect(bad.body).toContain('value="xyz"');
    expect((await deploymentsOf(project.id)).length).toBe(before);

    // A viewer sees no form, and a hand-made one is the API's 403.
    const v = await dashboardSession(t, viewer);
    expect((await v.get(`/projects/${project.id}`)).body).not.toContain('Deploy now');
    expect(
      (await v.post(`/projects/${project.id}/deployments`, { branch: 'main', cache: 'on' })).statusCode,
    ).toBe(403);
    expect((await deploymentsOf(project.id)).length).toBe(before);
  });

  it('redeploys with or without the build cache, as the confirmation’s box says', async () => {
    const s = await dashboardSession(t, alice);
    const project = await projectNamed('from-git');
    const id = await deploy(project.id, { branch: 'main' });
    await live(id);
    const confirm = await s.get(`/deployments/${id}/redeploy`);
    expect(confirm.body).toMatch(/<input type="checkbox" name="cache" checked \/>\s*Use the build cache/);
    const specOf = async (location: unknown) => {
      const newId = /^\/deployments\/(dpl_\w+)\?done=redeploy$/.exec(String(location))![1]!;
      const row = await t.deps.db
        .selectFrom('deployments')
        .selectAll()
        .where('id', '=', newId)
        .executeTakeFirstOrThrow();
      return decodeBuildSpec(newId, row.build_spec);
    };
    const without = await s.post(`/deployments/${id}/redeploy`, {});
    expect(without.statusCode).toBe(303);
    const bare = await specOf(without.headers.location);
    expect(bare.cache).toBeNull();
    // The same code: the commit the first build checked out.
    expect(bare.source).toMatchObject({ kind: 'git', commit: 'abcdef1234567890' });
    const withCache = await s.post(`/deployments/${id}/redeploy`, { cache: 'on' });
    expect(withCache.statusCode).toBe(303);
    expect((await specOf(withCache.headers.location)).cache).not.toBeNull();
  });

  it('shows each project card with its newest deployment, and marks rollback and promotion rows', async () => {
    const s = await dashboardSession(t, alice);
    const made = await t.call(alice, 'POST', '/v1/projects', {
      name: 'cards',
      repositoryUrl: 'https://github.com/acme/cards.git',
      organizationId: alice.orgId,
    });
    const projectId = made.body.data.id as string;
    const home0 = await s.get('/');
    expect(home0.body).toContain('no deployments yet');
    await live(await deploy(projectId));
    const second = await deploy(projectId);
    await live(second);
    const preview = await deploy(projectId, { branch: 'next', target: 'preview' });
    await live(preview);
    expect((await t.call(alice, 'POST', `/v1/deployments/${preview}/promote`)).status).toBe(200);
    clock.advance(1000);
    const rollback = await t.call(alice, 'POST', `/v1/deployments/${preview}/rollback`, {});
    expect(rollback.status).toBe(201);
    const rb = rollback.body.data.id as string;

    const home = await s.get('/');
    const card =
      /<li class="card">\s*<a class="title" href="\/projects\/(prj_\w+)">cards<\/a>[\s\S]*?<\/li>/.exec(
        home.body,
      )![0];
    expect(card).toContain(`data-latest="${rb}"`);
    expect(card).toContain('data-status="queued"');
    expect(card).toContain('>rollback<');
    expect(card).toMatch(/<time datetime="[^"]+" title="[^"]+">0s ago<\/time>/);

    await live(rb);
    const rows = (await s.get(`/projects/${projectId}`)).body;
    const row = (id: string) => new RegExp(`<tr data-id="${id}"[\\s\\S]*?</tr>`).exec(rows)![0];
    expect(row(rb)).toContain('>rollback<');
    expect(row(rb)).toContain(`title="Serves the build of ${second}`);
    expect(row(preview)).toContain('>promoted<');
    expect(row(preview)).not.toContain('>rollback<');
    expect(row(second)).not.toMatch(/>(promoted|rollback)</);
    // The card now shows the rollback live, with the commit it serves.
    const card2 = new RegExp(`data-latest="${rb}"[\\s\\S]*?</li>`).exec((await s.get('/')).body)![0];
    expect(card2).toContain('data-status="live"');
    expect(card2).toContain('<code>abcdef1</code>');
    expect(card2).toContain('Ship it');
    // And its own page says so beside its status.
    expect((await s.get(`/deployments/${rb}`)).body).toMatch(/<h1>[\s\S]*>rollback<[\s\S]*<\/h1>/);
  });

  it('draws metrics as a time series over the period, in words for screen readers', async () => {
    const s = await dashboardSession(t, alice);
    const project = await projectNamed('cards');
    const at = (iso: string, status = 200, durationMs = 20) => ({
      projectId: project.id,
      at: new Date(iso),
      status,
      durationMs,
      bytes: 1000,
    });
    clock.set(NOW);
    await recordRequests(t.deps, [
      at('2026-11-26T10:15:00Z'),
      at('2026-11-26T10:16:00Z', 500, 100),
      at('2026-11-26T10:17:00Z'),
      at('2026-11-26T11:59:00Z'),
      at('2026-11-26T12:29:00Z'),
      at('2026-11-26T12:29:30Z'),
      at('2026-11-20T08:00:00Z'),
    ]);
    const actor = { userId: alice.userId, email: alice.email, tokenId: '' };
    const day = await getMetricSeries(t.deps, actor, project.id, '24h');
    expect(day.span).toBe('hour');
    expect(day.points).toHaveLength(25);
    expect(day.points[0]!.at).toBe('2026-11-25T12:00:00.000Z');
    expect(day.points.at(-1)!.at).toBe('2026-11-26T12:00:00.000Z');
    const nonZero = day.points
      .filter((p) => p.requests > 0)
      .map((p) => [p.at.slice(11, 13), p.requests, p.errors]);
    expect(nonZero).toEqual([
      ['10', 3, 1],
      ['11', 1, 0],
      ['12', 2, 0],
    ]);
    expect(day.points.find((p) => p.at.startsWith('2026-11-26T10'))!.latencyAvg).toBe(46.67);

    // The API answers the same series (GET /v1/projects/<id>/metrics/series), 24h by default.
    const viaApi = await t.call(alice, 'GET', `/v1/projects/${project.id}/metrics/series`);
    expect(viaApi.status).toBe(200);
    expect(viaApi.body.data).toEqual(day);
    const weekViaApi = await t.call(alice, 'GET', `/v1/projects/${project.id}/metrics/series?period=7d`);
    expect(weekViaApi.body.data.points).toHaveLength(169);
    const badPeriod = await t.call(alice, 'GET', `/v1/projects/${project.id}/metrics/series?period=2w`);
    expect(badPeriod.status).toBe(400);
    expect(JSON.stringify(badPeriod.body.error)).toContain('period');
    const outsider = await t.user('outsider@example.com');
    expect((await t.call(outsider, 'GET', `/v1/projects/${project.id}/metrics/series`)).status).toBe(404);

    const hour = await getMetricSeries(t.deps, actor, project.id, '1h');
    expect(hour.span).toBe('minute');
    expect(hour.points).toHaveLength(61);
    expect(hour.points.reduce((a, p) => a + p.requests, 0)).toBe(3);
    const month = await getMetricSeries(t.deps, actor, project.id, '30d');
    expect(month.span).toBe('day');
    expect(month.points).toHaveLength(31);
    expect(month.points.find((p) => p.at.startsWith('2026-11-20'))!.requests).toBe(1);
    expect(month.points.find((p) => p.at.startsWith('2026-11-26'))!.requests).toBe(6);
    const week = await getMetricSeries(t.deps, actor, project.id, '7d');
    expect(week.points).toHaveLength(169);

    const page = (await s.get(`/projects/${project.id}/metrics?period=24h`)).body;
    expect(page).toContain(
      'aria-label="Requests per hour: 6 requests, at most 3 in the hour from 2026-11-26 10:00 UTC; 1 errors, at most 1 in the hour from 2026-11-26 10:00 UTC"',
    );
    // One line per series, over every hour of the period.
    const paths = [...page.matchAll(/<path d="([^"]*)" class="line (l1|l2)">/g)];
    expect(paths).toHaveLength(5);
    expect(paths[0]![1]!.split(/[ML]/).filter(Boolean)).toHaveLength(25);
    expect(page).toMatch(/<td data-label="From">2026-11-26 10:00<\/td>\s*<td data-label="Requests">3<\/td>/);
    expect(page).toContain('Errors by status');
  });
});
