import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHostResolver, type HostResolver } from '../../../server/features/serving/edge/resolve-host.ts';
import { newId } from '../../../server/core/ids.ts';
import {
  markBuilding,
  markDeploying,
  markLive,
} from '../../../server/features/deployments/deployment-state.ts';
import { setProjectStatus } from '../../../server/features/deployments/projects/set-project-status.ts';
import { onRoutingChange } from '../../../server/platform/deps/routing-signal.ts';
import { createTestApp, type TestApp, type TestUser } from '../../helpers/app.ts';
import { insertDeployment, insertProject, setProduction } from '../../helpers/edge.ts';
import { waitFor } from '../../helpers/wait-for.ts';

/**
 * The edge's route cache: answers live for minutes, and the routing signal that every change
 * sends drops the changed project's answers (and unknown-host answers) at once, no others.
 * The resolver is wired to the signal as the edge role wires it.
 */
describe('edge: route cache invalidated per project', () => {
  let t: TestApp;
  let alice: TestUser;
  let clock = 1_000_000;
  let resolver: HostResolver;
  let off: () => void;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice@example.com');
  });
  afterAll(async () => {
    await t.close();
  });
  const fresh = () => {
    // An hour-long lifetime: anything that changes below changed through a signal, not expiry.
    resolver = createHostResolver(t.deps, { ttlMs: 3_600_000, now: () => clock });
    off = onRoutingChange(t.deps, (projectId) => resolver.invalidate(projectId));
  };
  afterEach(() => off?.());

  /** A project with two live deployments, the first one production. */
  const site = async (name: string) => {
    const p = await insertProject(t, alice.orgId, { name });
    const one = await insertDeployment(t, p.id);
    const two = await insertDeployment(t, p.id, { target: 'preview' });
    await setProduction(t, p.id, one.id);
    return { p, one, two, host: `${name}.localhost` };
  };
  const serves = async (host: string) => {
    const r = await resolver.resolve(host);
    return r.kind === 'target' ? r.target.deploymentId : r.kind;
  };

  it('a promote answers the new deployment at once, and leaves the other projects cached', async () => {
    fresh();
    const a = await site('alpha');
    const b = await site('beta');
    expect(await serves(a.host)).toBe(a.one.id);
    expect(await serves(b.host)).toBe(b.one.id);
    expect(await serves(b.one.host + '.localhost')).toBe(b.one.id);
    // B changes behind the cache's back (no signal): what it serves now is the cached answer.
    await setProduction(t, b.p.id, b.two.id);

    const promoted = await t.call(alice, 'POST', `/v1/deployments/${a.two.id}/promote`);
    expect(promoted.status).toBe(200);
    expect(await serves(a.host)).toBe(a.two.id);
    // B's entries were not evicted by A's change: still the answer cached before.
    expect(resolver.peek(b.host)).toMatchObject({ kind: 'target', target: { deploymentId: b.one.id } });
    expect(await serves(b.host)).toBe(b.one.id);
    // A signal for B (here: no project named, as after a reconnect) then shows B's change.
    resolver.invalidate(null);
    expect(await serves(b.host)).toBe(b.two.id);
  });

  it('expires answers between 90% and 100% of ttlMs when no signal came', async () => {
    fresh();
    const c = await site('gamma');
    expect(await serves(c.host)).toBe(c.one.id);
    await setProduction(t, c.p.id, c.two.id);
    clock += 3_239_000;
    expect(await serves(c.host)).toBe(c.one.id);
    clock += 362_000;
    expect(await serves(c.host)).toBe(c.two.id);
  });

  it('looks an answer in use up again before it expires, answering from memory meanwhile', async () => {
    fresh();
    const c = await site('refresh');
    const servedNow = () => {
      const r = resolver.peek(c.host);
      return r?.kind === 'target' ? r.target.deploymentId : (r?.kind ?? 'not in memory');
    };
    expect(await serves(c.host)).toBe(c.one.id);
    // Changed without a signal: only a new look-up shows it.
    await setProduction(t, c.p.id, c.two.id);
    clock += 2_000_000; // 56% of the hour: not due yet
    expect(servedNow()).toBe(c.one.id);
    await new Promise((r) => setTimeout(r, 50));
    expect(servedNow()).toBe(c.one.id);
    // Past 80% of any lifetime (90% to 100% of the hour), before the first expiry: the request
    // is answered from memory and starts the look-up.
    clock += 900_000;
    expect(servedNow()).toBe(c.one.id);
    await waitFor('the look-up in the background', () => servedNow() === c.two.id);
    // Past where the first answer expired: the new one has a lifetime of its own.
    clock += 1_000_000;
    expect(servedNow()).toBe(c.two.id);
  });

  it('drops a background look-up that a routing change overtook', async () => {
    fresh();
    const c = await site('refresh-change');
    expect(await serves(c.host)).toBe(c.one.id);
    clock += 2_900_000;
    // Starts the look-up; the change's signal comes before it settles.
    expect(resolver.peek(c.host)).toMatchObject({ target: { deploymentId: c.one.id } });
    resolver.invalidate(c.p.id);
    await new Promise((r) => setTimeout(r, 50));
    // Not put back by the look-up: the next request looks up afresh.
    expect(resolver.peek(c.host)).toBeUndefined();
    expect(await serves(c.host)).toBe(c.one.id);
  });

  it('spreads the lifetimes of answers looked up together', async () => {
    fresh();
    // 40 hosts: all 40 landing on one side of the middle by chance is a 1 in 5 * 10^11 event.
    const hosts = [];
    for (let i = 0; i < 40; i++) hosts.push(await site(`spread-${i}`));
    for (const h of hosts) expect(await serves(h.host)).toBe(h.one.id);
    for (const h of hosts) await setProduction(t, h.p.id, h.two.id);
    // Halfway through the spread (95% of the lifetime), some answers have expired and some not.
    clock += 3_420_000;
    const served = await Promise.all(hosts.map(async (h) => (await serves(h.host)) === h.two.id));
    expect(served.filter(Boolean).length).toBeGreaterThan(0);
    expect(served.filter((x) => !x).length).toBeGreaterThan(0);
  });

  it('follows a deployment through its states at once, and a production deployment going live', async () => {
    fresh();
    const p = await insertProject(t, alice.orgId, { name: 'delta' });
    const d = await insertDeployment(t, p.id, { status: 'queued' });
    const url = `${d.host}.localhost`;
    expect(await resolver.resolve(url)).toMatchObject({ kind: 'not-ready', status: 'queued' });
    expect(await serves('delta.localhost')).toBe('no-production');
    await markBuilding(t.deps, d.id);
    expect(await resolver.resolve(url)).toMatchObject({ kind: 'not-ready', status: 'building' });
    await markDeploying(t.deps, d.id, { buildDurationMs: 1, artifactId: 'art' });
    expect(await serves(url)).toBe(d.id);
    await markLive(t.deps, d.id, { deployDurationMs: 1 });
    expect(await serves('delta.localhost')).toBe(d.id);
  });

  it('applies suspend, resume, rename, domain removal and delete at once', async () => {
    fresh();
    const e = await site('epsilon');
    const other = await site('zeta');
    const domain = 'www.epsilon.example';
    await t.deps.db
      .insertInto('domains')
      .values({
        id: newId('dom'),
        project_id: e.p.id,
        domain,
        status: 'verified',
        ssl_status: 'pending',
        ssl_error: null,
        verification_token: 'slipway-verification=x',
        verified_at: t.deps.clock.now().toISOString(),
        created_at: t.deps.clock.now().toISOString(),
        updated_at: t.deps.clock.now().toISOString(),
      })
      .execute();
    expect(await serves(domain)).toBe(e.one.id);
    expect(await serves(other.host)).toBe(other.one.id);

    await setProjectStatus(t.deps, 'epsilon', 'suspended');
    expect(await serves(e.host)).toBe('suspended');
    expect(await serves(domain)).toBe('suspended');
    await setProjectStatus(t.deps, e.p.id, 'active');
    expect(await serves(e.host)).toBe(e.one.id);

    const removed = await t.call(alice, 'DELETE', `/v1/projects/${e.p.id}/domains/${domain}`);
    expect(removed.status).toBe(200);
    expect(await serves(domain)).toBe('unknown');

    const renamed = await t.call(alice, 'PATCH', `/v1/projects/${e.p.id}`, { name: 'eta' });
    expect(renamed.status).toBe(200);
    expect(await serves('epsilon.localhost')).toBe('unknown');
    expect(await serves('eta.localhost')).toBe(e.one.id);

    const deleted = await t.call(alice, 'DELETE', `/v1/projects/${e.p.id}`);
    expect(deleted.status).toBe(200);
    expect(await serves('eta.localhost')).toBe('unknown');
    // None of this touched the other project's cached answer.
    expect(resolver.peek(other.host)).toMatchObject({ target: { deploymentId: other.one.id } });
  });

  it('keeps unknown hosts briefly, and forgets them on any routing change', async () => {
    fresh();
    const f = await site('theta');
    expect(await serves(f.host)).toBe(f.one.id);
    expect(await serves('iota.localhost')).toBe('unknown');
    const p = await insertProject(t, alice.orgId, { name: 'iota' });
    const d = await insertDeployment(t, p.id);
    await setProduction(t, p.id, d.id);
    expect(await serves('iota.localhost')).toBe('unknown');
    // A change to any project may have given the host to it: unknown answers go.
    resolver.invalidate(newId('prj'));
    expect(await serves('iota.localhost')).toBe(d.id);

    expect(await serves('kappa.localhost')).toBe('unknown');
    const k = await insertProject(t, alice.orgId, { name: 'kappa' });
    const kd = await insertDeployment(t, k.id);
    await setProduction(t, k.id, kd.id);
    clock += 4999;
    expect(await serves('kappa.localhost')).toBe('unknown');
    clock += 2;
    expect(await serves('kappa.localhost')).toBe(kd.id);
    // Known answers live on.
    expect(resolver.peek(f.host)).toBeDefined();
  });

  it('drops an answer that was being looked up when a change to its project came: it may predate the change', async () => {
    fresh();
    const g = await site('lambda');
    const h = await site('pi');
    const [ownChange, otherChange] = [resolver.resolve(g.host), resolver.resolve(h.host)];
    // Out of the cache at once: a request from now on looks up afresh, never joins these.
    resolver.invalidate(g.p.id);
    resolver.invalidate(newId('prj'));
    expect(resolver.peek(g.host)).toBeUndefined();
    expect(await ownChange).toMatchObject({ target: { deploymentId: g.one.id } });
    expect(await otherChange).toMatchObject({ target: { deploymentId: h.one.id } });
    // Its own project changed meanwhile: not kept. Another project's change: kept all the same.
    expect(resolver.peek(g.host)).toBeUndefined();
    expect(resolver.peek(h.host)).toMatchObject({ target: { deploymentId: h.one.id } });
    expect(await serves(g.host)).toBe(g.one.id);
    expect(resolver.peek(g.host)).toBeDefined();
  });

  it('a request after a change does not get the answer of a look-up started before it', async () => {
    fresh();
    const q = await site('rho');
    const before = resolver.resolve(q.host);
    await setProduction(t, q.p.id, q.two.id);
    resolver.invalidate(q.p.id);
    const after = resolver.resolve(q.host);
    expect(await after).toMatchObject({ target: { deploymentId: q.two.id } });
    await before;
    expect(resolver.peek(q.host)).toMatchObject({ target: { deploymentId: q.two.id } });
  });

  it('keeps at most maxEntries hosts, dropping the least recently used', async () => {
    const small = createHostResolver(t.deps, { ttlMs: 60_000, maxEntries: 2, now: () => clock });
    const [m, n, o] = [await site('mu'), await site('nu'), await site('omicron')];
    await small.resolve(m.host);
    await small.resolve(n.host);
    expect(small.peek(m.host)).toBeDefined();
    await small.resolve(o.host);
    expect(small.peek(n.host)).toBeUndefined();
    expect(small.peek(m.host)).toBeDefined();
    expect(small.peek(o.host)).toBeDefined();
  });
});
