import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHostResolver, type HostResolver } from '../../../server/features/serving/edge/resolve-host.ts';
import { createTestApp, type TestApp, type TestUser } from '../../helpers/app.ts';
import { insertDeployment, insertProject, setProduction } from '../../helpers/edge.ts';

/**
 * A service-domain label is looked up in one query for both of its meanings (a deployment's host,
 * a project's production host); these pin down which answer wins and what each case answers.
 */
describe('edge: resolving a label of the service domain', () => {
  let t: TestApp;
  let alice: TestUser;
  let resolver: HostResolver;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
    resolver = createHostResolver(t.deps, { ttlMs: 0 });
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers a deployment's host before a project's production host of the same label", async () => {
    const owner = await insertProject(t, alice.orgId, { name: 'owner' });
    const d = await insertDeployment(t, owner.id, { host: 'clash', artifact_id: 'art_own' });
    await setProduction(t, owner.id, d.id);
    const other = await insertProject(t, alice.orgId, { name: 'clash' });
    const o = await insertDeployment(t, other.id);
    await setProduction(t, other.id, o.id);
    expect(await resolver.resolve('clash.localhost')).toEqual({
      kind: 'target',
      target: {
        projectId: owner.id,
        deploymentId: d.id,
        artifactId: 'art_own',
        kind: 'static',
        spa: false,
        environment: 'production',
      },
    });
  });

  it("serves a production host with its production deployment, a rollback with its source's build", async () => {
    const p = await insertProject(t, alice.orgId, { name: 'rolled' });
    const built = await insertDeployment(t, p.id, {
      artifact_id: 'art_built',
      runtime: JSON.stringify({ kind: 'static', spa: true }),
    });
    const rollback = await insertDeployment(t, p.id, { source_deployment_id: built.id });
    await setProduction(t, p.id, rollback.id);
    expect(await resolver.resolve('Rolled.localhost:3001')).toEqual({
      kind: 'target',
      target: {
        projectId: p.id,
        deploymentId: rollback.id,
        artifactId: 'art_built',
        kind: 'static',
        spa: true,
        environment: 'production',
      },
    });
  });

  it('answers why a label is not served: not ready, suspended, nothing in production, gone, unknown', async () => {
    const p = await insertProject(t, alice.orgId, { name: 'states' });
    const failed = await insertDeployment(t, p.id, { status: 'failed' });
    expect(await resolver.resolve(`${failed.host}.localhost`)).toEqual({
      kind: 'not-ready',
      projectId: p.id,
      deploymentId: failed.id,
      status: 'failed',
    });
    expect(await resolver.resolve('states.localhost')).toEqual({ kind: 'no-production', projectId: p.id });
    // A production deployment id that names no row.
    await setProduction(t, p.id, 'dpl_missing');
    expect(await resolver.resolve('states.localhost')).toEqual({ kind: 'no-production', projectId: p.id });

    const s = await insertProject(t, alice.orgId, { name: 'paused', status: 'suspended' });
    const sd = await insertDeployment(t, s.id);
    await setProduction(t, s.id, sd.id);
    expect(await resolver.resolve('paused.localhost')).toEqual({ kind: 'suspended', projectId: s.id });
    expect(await resolver.resolve(`${sd.host}.localhost`)).toEqual({ kind: 'suspended', projectId: s.id });

    const gone = await insertProject(t, alice.orgId, { name: 'gone', deleted_at: new Date().toISOString() });
    const gd = await insertDeployment(t, gone.id);
    await setProduction(t, gone.id, gd.id);
    expect(await resolver.resolve('gone.localhost')).toEqual({ kind: 'unknown' });
    expect(await resolver.resolve(`${gd.host}.localhost`)).toEqual({ kind: 'unknown' });
    expect(await resolver.resolve('nobody.localhost')).toEqual({ kind: 'unknown' });
  });
});
