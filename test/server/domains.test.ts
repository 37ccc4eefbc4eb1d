import dns2 from 'dns2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dns } from '../../server/core/dns.ts';
import { tmpdir } from 'node:os';
import { loadConfig } from '../../server/platform/config.ts';
import { createHostResolver } from '../../server/features/serving/edge/resolve-host.ts';
import { newId } from '../../server/core/ids.ts';
import { deleteExpiredClaims } from '../../server/features/serving/domains/claim-expiry.ts';
import { dnsRecordsFor, EDGE_ADDRESS_HINT } from '../../server/features/serving/domains/dns-records.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { addMember } from '../helpers/members.ts';
import { readDeliveries } from '../helpers/deliveries.ts';

/** A resolver the test programs: a TXT answer (chunks per record), or an error code to throw. */
class FakeDns implements Dns {
  readonly answers = new Map<string, string[][] | string>();
  readonly asked: string[] = [];
  async resolveTxt(name: string): Promise<string[][]> {
    this.asked.push(name);
    const answer = this.answers.get(name) ?? 'ENOTFOUND';
    if (typeof answer === 'string') {
      throw Object.assign(new Error(`queryTxt ${answer} ${name}`), { code: answer });
    }
    return answer;
  }
}

const DAY = 86_400_000;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('domains', () => {
  let t: TestApp;
  let alice: TestUser;
  let dev: TestUser;
  let viewer: TestUser;
  let mallory: TestUser;
  const fake = new FakeDns();
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({ dns: fake, clock });
    alice = await t.user('alice@example.com');
    dev = await t.user('dev@example.com');
    viewer = await t.user('viewer@example.com');
    mallory = await t.user('mallory@example.com');
    await addMember(t, alice.orgId, dev, 'developer');
    await addMember(t, alice.orgId, viewer, 'viewer');
  });
  afterAll(() => t.close());

  let projectCount = 0;
  const newProject = async (owner: TestUser = alice) => {
    const res = await t.call(owner, 'POST', '/v1/projects', {
      name: `site-${++projectCount}`,
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: owner.orgId,
    });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  const domains = (pid: string, rest = '') => `/v1/projects/${pid}/domains${rest}`;
  const add = (user: TestUser | null, pid: string, domain: string) =>
    t.call(user, 'POST', domains(pid), { domain });
  const paths = (res: { body: any }) => res.body.error.details.map((d: { path: string }) => d.path).sort();
  const jobsOf = () =>
    t.deps.db.selectFrom('jobs').selectAll().where('kind', '=', 'domain.certificate').execute();

  it('adds a sub-domain: 201, pending, with a TXT challenge and a CNAME to the production host', async () => {
    const pid = await newProject();
    const res = await add(dev, pid, 'www.example.com');
    expect(res.status).toBe(201);
    const d = res.body.data;
    expect(d).toMatchObject({
      projectId: pid,
      domain: 'www.example.com',
      status: 'pending',
      sslStatus: 'pending',
      verifiedAt: null,
      createdAt: '2026-11-22T10:00:00.000Z',
    });
    expect(d.id).toMatch(/^dom_[a-z0-9]{20}$/);
    expect(d.dnsRecords).toEqual([
      {
        type: 'TXT',
        name: '_slipway-challenge.www.example.com',
        value: expect.stringMatching(/^slipway-verification=[a-z0-9]{32}$/),
      },
      { type: 'CNAME', name: 'www.example.com', value: `site-${projectCount}.localhost` },
    ]);
    expect(d.verification).toBeUndefined();
  });

  it('gives an apex domain an A record pointing at the edge', async () => {
    const pid = await newProject();
    const res = await add(alice, pid, 'example.net');
    expect(res.status).toBe(201);
    expect(res.body.data.dnsRecords[1]).toEqual({ type: 'A', name: 'example.net', value: EDGE_ADDRESS_HINT });
  });

  it('writes records from SLIPWAY_PUBLIC_EDGE_URL when set', () => {
    const ip = { domain: 'localhost', publicEdgeUrl: 'http://203.0.113.7:8080' };
    expect(dnsRecordsFor(ip, 'web', 'example.org', 'tok')[1]).toEqual({
      type: 'A',
      name: 'example.org',
      value: '203.0.113.7',
    });
    // A CNAME cannot point at an address: with an IP edge a sub-domain gets an A record too.
    expect(dnsRecordsFor(ip, 'web', 'app.example.org', 'tok')[1]).toEqual({
      type: 'A',
      name: 'app.example.org',
      value: '203.0.113.7',
    });
    const named = { domain: 'localhost', publicEdgeUrl: 'https://apps.example.com' };
    expect(dnsRecordsFor(named, 'web', 'app.example.org', 'tok')).toEqual([
      { type: 'TXT', name: '_slipway-challenge.app.example.org', value: 'tok' },
      { type: 'CNAME', name: 'app.example.org', value: 'web.apps.example.com' },
    ]);
    expect(dnsRecordsFor(named, 'web', 'example.org', 'tok')[1]!.value).toBe(EDGE_ADDRESS_HINT);
  });

  it('refuses a domain added twice to one project (CONFLICT), and says nothing of other projects', async () => {
    const pid = await newProject();
    expect((await add(alice, pid, 'dup.example.com')).status).toBe(201);
    const again = await add(alice, pid, 'dup.example.com');
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      code: 'CONFLICT',
      message: 'Domain dup.example.com is already added to this project',
    });
    // Another organization's claim on the same name is its own pending claim, with its own token.
    const elsewhere = await add(mallory, await newProject(mallory), 'dup.example.com');
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body.data.status).toBe('pending');
    expect(elsewhere.body.data.dnsRecords[0].value).not.toBe(again.body.data?.dnsRecords?.[0]?.value);
  });

  it('names bad input', async () => {
    const pid = await newProject();
    for (const domain of [
      'Example.com',
      'localhost',
      '192.168.1.1',
      '-bad.example.com',
      'a..b.com',
      'example.com.',
      'https://example.com',
      `${'a'.repeat(64)}.com`,
      `${'abcdefghi.'.repeat(26)}com`,
    ]) {
      const res = await add(alice, pid, domain);
      expect(res.status, domain).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(new Set(paths(res))).toEqual(new Set(['domain']));
    }
    const extra = await t.call(alice, 'POST', domains(pid), { domain: 'ok.example.com', ssl: true });
    expect(paths(extra)).toEqual(['ssl']);
    expect(paths(await t.call(alice, 'POST', domains(pid), {}))).toEqual(['domain']);
    // Deployment hosts live under the service's own domain: a custom domain there is refused.
    const own = await add(alice, pid, 'other-project.localhost');
    expect(own.status).toBe(400);
    expect(own.body.error.details[0].message).toContain("under the service's own domain");
  });

  it('lists newest first with meta and the DNS records; viewers may read', async () => {
    const pid = await newProject();
    for (const host of ['a.example.io', 'b.example.io', 'c.example.io']) {
      clock.advance(1000);
      await add(alice, pid, host);
    }
    const page = await t.call(viewer, 'GET', domains(pid, '?limit=2'));
    expect(page.status).toBe(200);
    expect(page.body.meta).toEqual({ page: 1, limit: 2, total: 3, next: expect.any(String) });
    expect(page.body.data.map((d: { domain: string }) => d.domain)).toEqual(['c.example.io', 'b.example.io']);
    expect(page.body.data[0].dnsRecords).toHaveLength(2);
    const page2 = await t.call(viewer, 'GET', domains(pid, '?limit=2&page=2'));
    expect(page2.body.data.map((d: { domain: string }) => d.domain)).toEqual(['a.example.io']);
    for (const q of ['limit=0', 'limit=101', 'page=0', 'status=x']) {
      expect((await t.call(viewer, 'GET', domains(pid, `?${q}`))).status, q).toBe(400);
    }
  });

  describe('verify', () => {
    const challenge = async (pid: string, host: string) => {
      const res = await add(alice, pid, host);
      expect(res.status).toBe(201);
      return res.body.data.dnsRecords[0].value as string;
    };
    const verify = (user: TestUser | null, pid: string, host: string) =>
      t.call(user, 'POST', domains(pid, `/${host}/verify`));

    it('lets the owner verify a name a squatter claimed first; the squatter cannot take it', async () => {
      // Mallory claims the victim's name first, before its owner does.
      const squat = await add(mallory, await newProject(mallory), 'app.victim-corp.com');
      expect(squat.status).toBe(201);
      const squatPid = squat.body.data.projectId as string;
      const squatToken = squat.body.data.dnsRecords[0].value as string;
      // The owner is not blocked, and learns nothing of the other claim.
      const pid = await newProject();
      const mine = await add(alice, pid, 'app.victim-corp.com');
      expect(mine.status).toBe(201);
      expect(JSON.stringify(mine.body)).not.toContain(mallory.orgId);
      const token = mine.body.data.dnsRecords[0].value as string;
      expect(token).not.toBe(squatToken);

      // The owner publishes their value and verifies: the name is theirs and routes to them.
      fake.answers.set('_slipway-challenge.app.victim-corp.com', [[token]]);
      const ok = await verify(alice, pid, 'app.victim-corp.com');
      expect(ok.status).toBe(200);
      expect(ok.body.data).toMatchObject({ status: 'verified', expiresAt: null });
      const routed = await createHostResolver(t.deps, { ttlMs: 0 }).resolve('app.victim-corp.com');
      expect(routed).toMatchObject({ kind: 'no-production', projectId: pid });

      // The squatter's value is not in DNS: still pending, and no certificate is asked for them.
      const jobsBefore = (await jobsOf()).length;
      const theirs = await verify(mallory, squatPid, 'app.victim-corp.com');
      expect(theirs.status).toBe(200);
      expect(theirs.body.data.status).toBe('pending');
      // Even with their value published too (they got hold of the DNS), the first verifier keeps it,
      // and the refusal names no organization or project.
      fake.answers.set('_slipway-challenge.app.victim-corp.com', [[token], [squatToken]]);
      const late = await verify(mallory, squatPid, 'app.victim-corp.com');
      expect(late.status).toBe(409);
      expect(late.body.error).toEqual({
        code: 'CONFLICT',
        message:
          'Domain app.victim-corp.com is already verified for another project; it must be removed there before it can be verified here',
      });
      expect((await jobsOf()).length).toBe(jobsBefore);
      const rows = await t.deps.db
        .selectFrom('domains')
        .select(['project_id', 'status'])
        .where('domain', '=', 'app.victim-corp.com')
        .orderBy('created_at')
        .execute();
      expect(rows).toEqual([
        { project_id: squatPid, status: 'pending' },
        { project_id: pid, status: 'verified' },
      ]);
      expect(await createHostResolver(t.deps, { ttlMs: 0 }).resolve('app.victim-corp.com')).toEqual(routed);
    });

    it('stays pending with what was found when the record is missing or wrong', async () => {
      const pid = await newProject();
      const expected = await challenge(pid, 'wrong.example.com');

      const none = await verify(dev, pid, 'wrong.example.com');
      expect(none.status).toBe(200);
      expect(none.body.data).toMatchObject({ status: 'pending', verifiedAt: null });
      expect(none.body.data.verification).toEqual({
        expected,
        found: [],
        message: expect.stringContaining('No TXT record at _slipway-challenge.wrong.example.com yet'),
      });

      fake.answers.set('_slipway-challenge.wrong.example.com', 'ENODATA');
      expect((await verify(dev, pid, 'wrong.example.com')).body.data.verification.found).toEqual([]);

      fake.answers.set('_slipway-challenge.wrong.example.com', [
        ['v=spf1 -all'],
        ['slipway-verification=', 'nope'],
      ]);
      const wrong = await verify(dev, pid, 'wrong.example.com');
      expect(wrong.body.data.status).toBe('pending');
      expect(wrong.body.data.verification).toEqual({
        expected,
        found: ['v=spf1 -all', 'slipway-verification=nope'],
        message: expect.stringContaining('does not hold the expected value'),
      });
      expect((await t.call(alice, 'GET', domains(pid))).body.data[0].status).toBe('pending');
    });

    it('stays pending and says so when the resolver fails', async () => {
      const pid = await newProject();
      await challenge(pid, 'flaky.example.com');
      for (const code of ['ESERVFAIL', 'ETIMEOUT']) {
        fake.answers.set('_slipway-challenge.flaky.example.com', code);
        const res = await verify(dev, pid, 'flaky.example.com');
        expect(res.status).toBe(200);
        expect(res.body.data.status).toBe('pending');
        expect(res.body.data.verification.found).toEqual([]);
        expect(res.body.data.verification.message).toBe(
          `The DNS lookup of _slipway-challenge.flaky.example.com failed (${code}); the domain stays pending: verify again in a minute.`,
        );
      }
    });

    it('verifies on a match (chunks joined), emits domain.verified and queues the certificate, once', async () => {
      const pid = await newProject();
      const expected = await challenge(pid, 'shop.example.com');
      const now = clock.now().toISOString();
      await t.deps.db
        .insertInto('webhooks')
        .values({
          id: newId('whk'),
          project_id: pid,
          url: 'http://127.0.0.1:9/hook',
          events: JSON.stringify(['domain.verified']),
          secret_ciphertext: t.deps.cipher.encrypt('a-secret-of-16-chars'),
          active: 1,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const jobsBefore = (await jobsOf()).length;
      // A long TXT value arrives in chunks: the record is their concatenation.
      fake.answers.set('_slipway-challenge.shop.example.com', [
        ['unrelated'],
        [expected.slice(0, 10), expected.slice(10)],
      ]);
      clock.advance(5000);

      const res = await verify(dev, pid, 'shop.example.com');
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        domain: 'shop.example.com',
        status: 'verified',
        sslStatus: 'pending',
        verifiedAt: clock.now().toISOString(),
      });
      expect(res.body.data.verification).toBeUndefined();

      const jobs = await jobsOf();
      expect(jobs).toHaveLength(jobsBefore + 1);
      const job = jobs.at(-1)!;
      expect(JSON.parse(job.payload)).toEqual({ domainId: res.body.data.id });
      expect(job.status).toBe('queued');
      const deliveries = await readDeliveries(t.deps.db);
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]!.event).toBe('domain.verified');
      expect(JSON.parse(deliveries[0]!.payload)).toEqual({
        event: 'domain.verified',
        timestamp: clock.now().toISOString(),
        data: {
          domainId: res.body.data.id,
          projectId: pid,
          domain: 'shop.example.com',
          status: 'verified',
          sslStatus: 'pending',
        },
      });

      // Verified already: answered unchanged, without asking DNS or emitting again.
      const asked = fake.asked.length;
      clock.advance(5000);
      const again = await verify(dev, pid, 'shop.example.com');
      expect(again.status).toBe(200);
      expect(again.body.data).toEqual(res.body.data);
      expect(fake.asked.length).toBe(asked);
      expect(await jobsOf()).toHaveLength(jobsBefore + 1);
      expect(await readDeliveries(t.deps.db)).toHaveLength(1);
      const listed = await t.call(viewer, 'GET', domains(pid));
      expect(listed.body.data[0]).toMatchObject({ status: 'verified', verifiedAt: res.body.data.verifiedAt });
    });

    it('accepts the host name in any case in the path, and answers 404 for an unknown one', async () => {
      const pid = await newProject();
      await challenge(pid, 'case.example.com');
      expect((await verify(dev, pid, 'CASE.example.com')).body.data.domain).toBe('case.example.com');
      const unknown = await verify(dev, pid, 'nope.example.com');
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('NOT_FOUND');
    });
  });

  it('deletes: 200 with a message, then the name is free again', async () => {
    const pid = await newProject();
    await add(alice, pid, 'gone.example.com');
    const res = await t.call(dev, 'DELETE', domains(pid, '/gone.example.com'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      message: `Domain gone.example.com removed from project ${pid}`,
    });
    expect((await t.call(alice, 'GET', domains(pid))).body.data).toEqual([]);
    expect((await t.call(dev, 'DELETE', domains(pid, '/gone.example.com'))).status).toBe(404);
    expect((await add(mallory, await newProject(mallory), 'gone.example.com')).status).toBe(201);
  });

  it('needs a token (401), a developer to write (403), and membership to see anything (404)', async () => {
    const pid = await newProject();
    await add(alice, pid, 'guarded.example.com');
    for (const res of [
      await t.call(null, 'GET', domains(pid)),
      await add(null, pid, 'x.example.com'),
      await t.call(null, 'POST', domains(pid, '/guarded.example.com/verify')),
      await t.call(null, 'DELETE', domains(pid, '/guarded.example.com')),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
    for (const res of [
      await add(viewer, pid, 'x.example.com'),
      await t.call(viewer, 'POST', domains(pid, '/guarded.example.com/verify')),
      await t.call(viewer, 'DELETE', domains(pid, '/guarded.example.com')),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
    for (const res of [
      await t.call(mallory, 'GET', domains(pid)),
      await add(mallory, pid, 'x.example.com'),
      await t.call(mallory, 'POST', domains(pid, '/guarded.example.com/verify')),
      await t.call(mallory, 'DELETE', domains(pid, '/guarded.example.com')),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    const listed = await t.call(alice, 'GET', domains(pid));
    expect(listed.body.data.map((d: { domain: string }) => d.domain)).toEqual(['guarded.example.com']);
  });

  it('releases domains when the project is deleted', async () => {
    const pid = await newProject();
    await add(alice, pid, 'released.example.com');
    expect((await t.call(alice, 'DELETE', `/v1/projects/${pid}`)).status).toBe(200);
    expect((await add(alice, await newProject(), 'released.example.com')).status).toBe(201);
  });

  // Last: it moves the shared clock a week on.
  it('expires pending claims after SLIPWAY_DOMAIN_CLAIM_TTL (7 days); verified ones stay', async () => {
    expect(loadConfig({ SLIPWAY_DATA_DIR: tmpdir() }).domainClaimTtlMs).toBe(7 * DAY);
    expect(loadConfig({ SLIPWAY_DATA_DIR: tmpdir(), SLIPWAY_DOMAIN_CLAIM_TTL: '2d' }).domainClaimTtlMs).toBe(
      2 * DAY,
    );
    expect(() => loadConfig({ SLIPWAY_DATA_DIR: tmpdir(), SLIPWAY_DOMAIN_CLAIM_TTL: 'a week' })).toThrow(
      /SLIPWAY_DOMAIN_CLAIM_TTL must be a duration/,
    );

    const pid = await newProject();
    const added = await add(alice, pid, 'stale.example.com');
    expect(added.body.data.expiresAt).toBe(new Date(clock.now().getTime() + 7 * DAY).toISOString());
    const kept = await add(alice, pid, 'kept.example.com');
    fake.answers.set('_slipway-challenge.kept.example.com', [[kept.body.data.dnsRecords[0].value]]);
    expect((await t.call(alice, 'POST', domains(pid, '/kept.example.com/verify'))).body.data.status).toBe(
      'verified',
    );

    clock.advance(7 * DAY - 1);
    expect((await t.call(alice, 'GET', domains(pid))).body.data.map((d: any) => d.domain).sort()).toEqual([
      'kept.example.com',
      'stale.example.com',
    ]);
    clock.advance(1);
    // Gone to the API at once: not listed, not verifiable...
    expect((await t.call(alice, 'GET', domains(pid))).body.data.map((d: any) => d.domain)).toEqual([
      'kept.example.com',
    ]);
    const late = await t.call(alice, 'POST', domains(pid, '/stale.example.com/verify'));
    expect(late.status).toBe(404);
    // ...deleted by the monitoring run...
    expect(await deleteExpiredClaims(t.deps.db, clock, 7 * DAY)).toBeGreaterThanOrEqual(1);
    const left = await t.deps.db
      .selectFrom('domains')
      .select('domain')
      .where('project_id', '=', pid)
      .execute();
    expect(left).toEqual([{ domain: 'kept.example.com' }]);
    // ...and the name can be claimed again with a new token.
    const again = await add(alice, pid, 'stale.example.com');
    expect(again.status).toBe(201);
    expect(again.body.data.dnsRecords[0].value).not.toBe(added.body.data.dnsRecords[0].value);
  });

  it('lets a project claim its own expired name again before the sweep', async () => {
    const pid = await newProject();
    expect((await add(alice, pid, 'again.example.com')).status).toBe(201);
    clock.advance(7 * DAY);
    expect((await add(alice, pid, 'again.example.com')).status).toBe(201);
    const rows = await t.deps.db
      .selectFrom('domains')
      .select('id')
      .where('domain', '=', 'again.example.com')
      .execute();
    expect(rows).toHaveLength(1);
  });
});

describe('domain verification against a real DNS server on 127.0.0.1', () => {
  const { Packet } = dns2;
  // RFC 1035 response codes (dns2 has Packet.RCODE, untyped).
  const SERVFAIL = 2;
  const NXDOMAIN = 3;
  const txt = new Map<string, string[]>();
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const name = request.questions[0]?.name ?? '';
      const data = txt.get(name);
      if (name.startsWith('_slipway-challenge.broken.')) response.header.rcode = SERVFAIL;
      else if (!data) response.header.rcode = NXDOMAIN;
      else
        response.answers.push({
          name,
          type: Packet.TYPE.TXT,
          class: Packet.CLASS.IN,
          ttl: 60,
          data,
        } as never);
      void send(response);
    },
  });
  let t: TestApp;
  let alice: TestUser;
  let pid: string;

  beforeAll(async () => {
    const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
    t = await createTestApp({ env: { SLIPWAY_DNS_SERVERS: `127.0.0.1:${addresses.udp!.port}` } });
    alice = await t.user('alice@example.com');
    const project = await t.call(alice, 'POST', '/v1/projects', {
      name: 'real-dns',
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: alice.orgId,
    });
    pid = project.body.data.id;
  });
  afterAll(async () => {
    await t.close();
    await server.close();
  });

  const addAndVerify = async (host: string, record?: (token: string) => string[]) => {
    const added = await t.call(alice, 'POST', `/v1/projects/${pid}/domains`, { domain: host });
    const token = added.body.data.dnsRecords[0].value as string;
    if (record) txt.set(`_slipway-challenge.${host}`, record(token));
    const res = await t.call(alice, 'POST', `/v1/projects/${pid}/domains/${host}/verify`);
    expect(res.status).toBe(200);
    return { token, data: res.body.data };
  };

  it('verifies when the TXT record matches, its value split in two character strings', async () => {
    const { data } = await addAndVerify('real.example.org', (token) => [token.slice(0, 7), token.slice(7)]);
    expect(data.status).toBe('verified');
    expect(data.verifiedAt).toMatch(ISO);
  });

  it('reports a wrong value, a missing name and a server failure as pending', async () => {
    const wrong = await addAndVerify('wrong.example.org', () => ['slipway-verification=stale']);
    expect(wrong.data.status).toBe('pending');
    expect(wrong.data.verification).toMatchObject({
      expected: wrong.token,
      found: ['slipway-verification=stale'],
    });

    const missing = await addAndVerify('missing.example.org');
    expect(missing.data.verification).toMatchObject({ found: [] });
    expect(missing.data.verification.message).toContain('No TXT record');

    const broken = await addAndVerify('broken.example.org');
    expect(broken.data.status).toBe('pending');
    expect(broken.data.verification.message).toContain('failed (ESERVFAIL)');
  });
});
