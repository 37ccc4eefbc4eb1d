import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../server/core/free-port.ts';
import { newId } from '../../server/core/ids.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { tlsGet } from '../helpers/tls.ts';
import { waitFor } from '../helpers/wait-for.ts';

/**
 * Custom domains for real: the TXT record comes from a DNS server on 127.0.0.1 through
 * SLIPWAY_DNS_SERVERS, the worker issues the certificate (self-signed: no ACME directory), and
 * the edge's TLS listener serves the production deployment with it by SNI.
 */
describe('domains over DNS and TLS', () => {
  let dns: TestDnsServer;
  let s: Stack;
  let repo: GitRepo;
  let tlsPort: number;
  let owner: { token: string; orgId: string; userId: string };
  let projectId: string;
  const DOMAIN = 'www.shop.test';

  const call = async (token: string | null, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${s.apiUrl}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const verify = (token: string | null, domain = DOMAIN) =>
    call(token, 'POST', `/v1/projects/${projectId}/domains/${domain}/verify`);

  beforeAll(async () => {
    dns = await startDnsServer();
    tlsPort = await findFreePort();
    s = await startStack({
      env: { SLIPWAY_DNS_SERVERS: dns.address, SLIPWAY_EDGE_TLS_PORT: String(tlsPort) },
    });
    owner = await s.user('owner@shop.test');
    repo = createGitRepo({ fromFixture: 'static-site' });
    const project = await s.client(owner.token).projects.create({
      name: 'shop',
      repositoryUrl: repo.url,
      organizationId: owner.orgId,
    });
    projectId = project.id;
    const created = await s.client(owner.token).deployments.create(projectId);
    const live = await waitFor(
      'the deployment to go live',
      async () => {
        const d = await s.client(owner.token).deployments.get(created.id);
        return d.status === 'live' || d.status === 'failed' ? d : null;
      },
      20_000,
    );
    expect(live.status).toBe('live');
  });
  afterAll(async () => {
    await s?.stop();
    await dns?.close();
    repo?.remove();
  });

  it('verifies through the DNS server: none, then a wrong value, then the right one', async () => {
    const added = await call(owner.token, 'POST', `/v1/projects/${projectId}/domains`, { domain: DOMAIN });
    expect(added.status).toBe(201);
    const expected = added.body.data.dnsRecords[0].value as string;
    const challenge = `_slipway-challenge.${DOMAIN}`;

    const none = await verify(owner.token);
    expect(none.status).toBe(200);
    expect(none.body.data).toMatchObject({ status: 'pending', verification: { expected, found: [] } });
    expect(none.body.data.verification.message).toMatch(
      /^No TXT record at _slipway-challenge\.www\.shop\.test yet/,
    );
    expect(dns.asked).toContain(`TXT ${challenge}`);

    dns.txt.set(challenge, [['slipway-verification=stale']]);
    const wrong = await verify(owner.token);
    expect(wrong.body.data).toMatchObject({
      status: 'pending',
      sslStatus: 'pending',
      verification: { expected, found: ['slipway-verification=stale'] },
    });
    expect(wrong.body.data.verification.message).toMatch(/does not hold the expected value/);

    // The right value beside an unrelated record, split in two character strings as long values are.
    dns.txt.set(challenge, [['v=spf1 -all'], [expected.slice(0, 10), expected.slice(10)]]);
    const right = await verify(owner.token);
    expect(right.body.data).toMatchObject({ status: 'verified', verifiedAt: expect.any(String) });
    expect(right.body.data.verification).toBeUndefined();
  });

  it('refuses verification to a viewer (403), strangers (404) and anonymous callers (401)', async () => {
    const viewer = await s.user('viewer@shop.test');
    const stranger = await s.user('stranger@shop.test');
    const now = new Date().toISOString();
    await s.running.deps.db
      .insertInto('memberships')
      .values({
        id: newId('mem'),
        organization_id: owner.orgId,
        email: 'viewer@shop.test',
        user_id: viewer.userId,
        role: 'viewer',
        invited_at: now,
        joined_at: now,
      })
      .execute();
    expect((await verify(viewer.token)).status).toBe(403);
    expect((await verify(stranger.token)).status).toBe(404);
    expect((await verify(null)).status).toBe(401);
    expect((await verify(owner.token, 'not-added.shop.test')).status).toBe(404);
    // Reading the certificate is open to every member.
    expect(
      (await call(viewer.token, 'GET', `/v1/projects/${projectId}/domains/${DOMAIN}/certificate`)).status,
    ).toBe(200);
  });

  it('issues a self-signed certificate and serves the domain by SNI on the TLS port', async () => {
    const domain = await waitFor(
      'the certificate',
      async () => {
        const list = await call(owner.token, 'GET', `/v1/projects/${projectId}/domains`);
        const d = list.body.data.find((x: { domain: string }) => x.domain === DOMAIN);
        return d?.sslStatus === 'active' ? d : null;
      },
      10_000,
    );
    expect(domain.status).toBe('verified');
    const cert = (await call(owner.token, 'GET', `/v1/projects/${projectId}/domains/${DOMAIN}/certificate`))
      .body.data;
    expect(cert).toMatchObject({
      domain: DOMAIN,
      sslStatus: 'active',
      sslError: null,
      certificate: { selfSigned: true, issuer: `Slipway self-signed (${DOMAIN})` },
    });

    // Trusting the self-signed certificate, as `curl --cacert` would.
    const res = await tlsGet(tlsPort, DOMAIN, '/', cert.certificate.pem);
    expect(res.authorized).toBe(true);
    expect(res.peer.subject.CN).toBe(DOMAIN);
    expect(res.peer.subjectaltname).toBe(`DNS:${DOMAIN}`);
    expect(res.status).toBe(200);
    expect(res.body).toContain('<h1>');
    // The plain edge serves the same deployment by Host.
    const plain = await s.fetchFromEdge(`http://${DOMAIN}/`);
    expect(await plain.text()).toBe(res.body);
  });

  it('fails the handshake for a name without a certificate', async () => {
    const error = await new Promise<Error>((resolve) => {
      const socket = connect({
        host: '127.0.0.1',
        port: tlsPort,
        servername: 'unknown.shop.test',
        rejectUnauthorized: false,
      });
      socket.on('secureConnect', () => {
        socket.destroy();
        resolve(new Error('handshake completed'));
      });
      socket.on('error', resolve);
    });
    expect(error.message).not.toBe('handshake completed');
  });
});
