import { execFileSync } from 'node:child_process';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  X509Certificate as PeculiarX509Certificate,
} from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateJob } from '../../server/features/serving/certificates/certificate-job.ts';
import {
  challengeTokenOf,
  findChallenge,
  putChallenge,
} from '../../server/features/serving/certificates/challenge-store.ts';
import { issueCertificate } from '../../server/features/serving/certificates/issue-certificate.ts';
import { renewCertificates } from '../../server/features/serving/certificates/renew-certificates.ts';
import type { IssuedCertificate } from '../../server/features/serving/certificates/issued-certificate.ts';
import { createSelfSignedCertificate } from '../../server/features/serving/certificates/self-signed.ts';
import { createSniCache } from '../../server/features/serving/certificates/sni-cache.ts';
import { createEdgeServer } from '../../server/features/serving/edge/server.ts';
import { createHostResolver } from '../../server/features/serving/edge/resolve-host.ts';
import { loadConfig } from '../../server/platform/config.ts';
import type { Job } from '../../server/platform/queue/queue.ts';
import { newId } from '../../server/core/ids.ts';
import type { DomainsTable } from '../../server/platform/store/schema.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { edgeRequest, insertProject, listen } from '../helpers/edge.ts';
import { addMember } from '../helpers/members.ts';
import { startStub, type StubServer } from '../helpers/stub-server.ts';
import { readDeliveries } from '../helpers/deliveries.ts';
import { DELIVERY_JOB } from '../../server/features/webhooks/delivery-job.ts';

const NOW = '2026-11-22T10:00:00.000Z';
const DAY = 86_400_000;

describe('configuration', () => {
  it('reads the TLS, ACME and monitoring variables, and names a bad one', () => {
    const base = { SLIPWAY_DATA_DIR: tmpdir() };
    const config = loadConfig({
      ...base,
      SLIPWAY_EDGE_TLS_PORT: '3443',
      SLIPWAY_ACME_DIRECTORY: 'https://acme.example/dir',
      SLIPWAY_ACME_EMAIL: 'ops@example.com',
      SLIPWAY_HEALTH_INTERVAL: '30s',
    });
    expect(config).toMatchObject({
      edgeTlsPort: 3443,
      acmeDirectory: 'https://acme.example/dir',
      acmeEmail: 'ops@example.com',
      healthIntervalMs: 30_000,
      runtimeSampleIntervalMs: 10_000,
    });
    expect(loadConfig(base)).toMatchObject({
      edgeTlsPort: undefined,
      acmeDirectory: undefined,
      healthIntervalMs: 60_000,
    });
    const bad: [string, string, RegExp][] = [
      ['SLIPWAY_EDGE_TLS_PORT', 'https', /SLIPWAY_EDGE_TLS_PORT must be a whole number/],
      ['SLIPWAY_ACME_DIRECTORY', 'acme.example/dir', /SLIPWAY_ACME_DIRECTORY must be the http\(s\) URL/],
      ['SLIPWAY_ACME_EMAIL', 'ops', /SLIPWAY_ACME_EMAIL must be an e-mail address/],
      ['SLIPWAY_ACME_CA_FILE', '/no/such/ca.pem', /SLIPWAY_ACME_CA_FILE must be a readable PEM file/],
      ['SLIPWAY_HEALTH_INTERVAL', 'often', /SLIPWAY_HEALTH_INTERVAL must be a duration/],
    ];
    for (const [name, value, message] of bad) {
      expect(() => loadConfig({ ...base, [name]: value }), name).toThrow(message);
    }
  });
});

describe('self-signed certificates', () => {
  let cert: IssuedCertificate;
  let x509: X509Certificate;
  // Valid now, for the tools that check validity against the real clock.
  let current: IssuedCertificate;
  beforeAll(async () => {
    cert = await createSelfSignedCertificate('www.example.com', new Date(NOW));
    x509 = new X509Certificate(cert.certPem);
    current = await createSelfSignedCertificate('www.example.com', new Date());
  });

  it('names the domain, lasts 90 days and is signed by its own key', () => {
    expect(x509.subject).toBe('O=Slipway self-signed\nCN=www.example.com');
    expect(x509.issuer).toBe(x509.subject);
    expect(x509.subjectAltName).toBe('DNS:www.example.com');
    expect(x509.checkHost('www.example.com')).toBe('www.example.com');
    expect(x509.checkHost('other.example.com')).toBeUndefined();
    expect(new Date(x509.validFrom).toISOString()).toBe('2026-11-22T09:00:00.000Z');
    expect(new Date(x509.validTo).toISOString()).toBe(new Date(Date.parse(NOW) + 90 * DAY).toISOString());
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.ca).toBe(true);
    expect(x509.serialNumber).toMatch(/^[0-9A-F]{32}$/);
    expect(x509.publicKey.asymmetricKeyDetails).toMatchObject({ namedCurve: 'prime256v1' });
    const parsed = new PeculiarX509Certificate(cert.certPem);
    const constraints = parsed.getExtension(BasicConstraintsExtension);
    expect([constraints?.ca, constraints?.critical]).toEqual([true, true]);
    expect(parsed.getExtension(ExtendedKeyUsageExtension)?.usages).toEqual([ExtendedKeyUsage.serverAuth]);
    expect(cert).toMatchObject({ selfSigned: true, issuer: 'Slipway self-signed (www.example.com)' });
    // The key is the certificate's.
    expect(createPublicKey(cert.keyPem).export({ type: 'spki', format: 'der' })).toEqual(
      x509.publicKey.export({ type: 'spki', format: 'der' }),
    );
  });

  it('is accepted by openssl as its own trust anchor', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-cert-'));
    try {
      writeFileSync(join(dir, 'cert.pem'), current.certPem);
      let out: string;
      try {
        out = execFileSync('openssl', ['verify', '-CAfile', 'cert.pem', 'cert.pem'], {
          cwd: dir,
          encoding: 'utf8',
        });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // no openssl here: Node checked it above
        throw err;
      }
      expect(out.trim()).toBe('cert.pem: OK');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('certificate issuance', () => {
  const clock = new ManualClock(NOW);
  let t: TestApp;
  let alice: TestUser;
  let viewer: TestUser;
  let mallory: TestUser;
  let acmeStub: StubServer;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    viewer = await t.user('viewer@example.com');
    mallory = await t.user('mallory@example.com');
    await addMember(t, alice.orgId, viewer, 'viewer');
    // Not an ACME server: every path answers 404, as a mistyped SLIPWAY_ACME_DIRECTORY would.
    acmeStub = await startStub((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not here');
    });
  });
  afterAll(async () => {
    await t.close();
    await acmeStub.close();
  });

  /** A verified domain on a new project, with a webhook subscribed to domain.ssl.issued. */
  async function verifiedDomain(name: string, values: Partial<DomainsTable> = {}) {
    const project = await insertProject(t, alice.orgId);
    const row: DomainsTable = {
      id: newId('dom'),
      project_id: project.id,
      domain: name,
      status: 'verified',
      ssl_status: 'pending',
      ssl_error: null,
      verification_token: 'slipway-verification=x',
      verified_at: NOW,
      created_at: NOW,
      updated_at: NOW,
      ...values,
    };
    await t.deps.db.insertInto('domains').values(row).execute();
    await t.deps.db
      .insertInto('webhooks')
      .values({
        id: newId('whk'),
        project_id: project.id,
        url: 'http://127.0.0.1:9/hook',
        events: JSON.stringify(['domain.ssl.issued']),
        secret_ciphertext: t.deps.cipher.encrypt('a-secret-of-16-chars'),
        active: 1,
        created_at: NOW,
        updated_at: NOW,
      })
      .execute();
    return { project, domain: row };
  }
  const domainRow = (id: string) =>
    t.deps.db.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const certificatePath = (projectId: string, domain: string) =>
    `/v1/projects/${projectId}/domains/${domain}/certificate`;
  const asJob = (payload: unknown) =>
    ({ payload: JSON.stringify(payload), attempts: 1, max_attempts: 2 }) as Job;

  it('without an ACME directory issues a self-signed certificate, stores the key encrypted and emits domain.ssl.issued', async () => {
    const { project, domain } = await verifiedDomain('shop.example.com');
    await createCertificateJob(t.deps).handle(asJob({ domainId: domain.id }), new AbortController().signal);

    expect(await domainRow(domain.id)).toMatchObject({ ssl_status: 'active', ssl_error: null });
    const stored = await t.deps.db
      .selectFrom('certificates')
      .selectAll()
      .where('domain_id', '=', domain.id)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({
      domain: 'shop.example.com',
      self_signed: 1,
      issuer: 'Slipway self-signed (shop.example.com)',
    });
    expect(stored.key_ciphertext).not.toContain('PRIVATE KEY');
    const x509 = new X509Certificate(stored.cert_pem);
    expect(x509.subjectAltName).toBe('DNS:shop.example.com');
    expect(stored.not_after).toBe(new Date(x509.validTo).toISOString());
    expect(
      createPublicKey(t.deps.cipher.decrypt(stored.key_ciphertext)).export({ type: 'spki', format: 'der' }),
    ).toEqual(x509.publicKey.export({ type: 'spki', format: 'der' }));

    const hooks = await t.deps.db
      .selectFrom('webhooks')
      .select('id')
      .where('project_id', '=', project.id)
      .execute();
    const [delivery, ...more] = (
      await Promise.all(hooks.map((h) => readDeliveries(t.deps.db, { webhookId: h.id })))
    ).flat();
    expect(more).toEqual([]);
    expect(delivery!.event).toBe('domain.ssl.issued');
    expect(JSON.parse(delivery!.payload)).toEqual({
      event: 'domain.ssl.issued',
      timestamp: NOW,
      data: {
        domainId: domain.id,
        projectId: project.id,
        domain: 'shop.example.com',
        status: 'verified',
        sslStatus: 'active',
      },
    });

    // Members read the certificate; others and anonymous callers cannot.
    const res = await t.call(viewer, 'GET', certificatePath(project.id, 'shop.example.com'));
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      domain: 'shop.example.com',
      sslStatus: 'active',
      sslError: null,
      certificate: {
        issuer: 'Slipway self-signed (shop.example.com)',
        selfSigned: true,
        notBefore: stored.not_before,
        notAfter: stored.not_after,
        pem: stored.cert_pem,
      },
    });
    expect((await t.call(mallory, 'GET', certificatePath(project.id, 'shop.example.com'))).status).toBe(404);
    expect((await t.call(null, 'GET', certificatePath(project.id, 'shop.example.com'))).status).toBe(401);
    expect((await t.call(alice, 'GET', certificatePath(project.id, 'nope.example.com'))).status).toBe(404);
    const listed = await t.call(alice, 'GET', `/v1/projects/${project.id}/domains`);
    expect(listed.body.data[0].sslStatus).toBe('active');
  });

  it('a failing ACME directory makes sslStatus failed with the reason', async () => {
    const { project, domain } = await verifiedDomain('broken.example.com');
    const deps = { ...t.deps, config: { ...t.deps.config, acmeDirectory: `${acmeStub.url}/directory` } };
    expect(await issueCertificate(deps, domain.id)).toBe('failed');
    const row = await domainRow(domain.id);
    expect(row.ssl_status).toBe('failed');
    expect(row.ssl_error).toMatch(/^The certificate request for broken\.example\.com failed: .*404/);
    expect(acmeStub.requests.map((r) => r.url)).toContain('/directory');
    const res = await t.call(alice, 'GET', certificatePath(project.id, 'broken.example.com'));
    expect(res.body.data).toMatchObject({ sslStatus: 'failed', sslError: row.ssl_error, certificate: null });
    expect(await readDeliveries(t.deps.db, { event: 'domain.ssl.issued' })).toHaveLength(1);
  });

  it('a failed renewal keeps a still valid certificate active, with the reason', async () => {
    const { domain } = await verifiedDomain('renew.example.com');
    expect(await issueCertificate(t.deps, domain.id)).toBe('issued');
    const failing = async () => {
      throw new Error('rate limited');
    };
    expect(await issueCertificate(t.deps, domain.id, failing)).toBe('failed');
    expect(await domainRow(domain.id)).toMatchObject({
      ssl_status: 'active',
      ssl_error: 'The certificate request for renew.example.com failed: rate limited',
    });
  });

  it('skips a domain that is not verified or gone', async () => {
    const { domain } = await verifiedDomain('pending.example.com', { status: 'pending', verified_at: null });
    expect(await issueCertificate(t.deps, domain.id)).toBe('skipped');
    expect(await issueCertificate(t.deps, 'dom_doesnotexist000000')).toBe('skipped');
    expect((await domainRow(domain.id)).ssl_status).toBe('pending');
  });

  it('the daily check queues renewals 30 days ahead and retries failed domains, once', async () => {
    for (const table of ['jobs', 'certificates', 'domains'] as const)
      await t.deps.db.deleteFrom(table).execute();
    const soon = await verifiedDomain('soon.example.com');
    const later = await verifiedDomain('later.example.com');
    const failed = await verifiedDomain('failed.example.com', { ssl_status: 'failed', ssl_error: 'x' });
    await issueCertificate(t.deps, soon.domain.id);
    clock.advance(2 * DAY);
    await issueCertificate(t.deps, later.domain.id);
    // soon's certificate (90 days) ends 61 days after now; later's 63 days after.
    clock.advance(59 * DAY + DAY / 2);
    // A certificate whose domain was removed is forgotten.
    const gone = await verifiedDomain('gone.example.com');
    await issueCertificate(t.deps, gone.domain.id);
    await t.deps.db.deleteFrom('domains').where('id', '=', gone.domain.id).execute();

    const queued = await renewCertificates(t.deps);
    expect(queued.sort()).toEqual([soon.domain.id, failed.domain.id].sort());
    expect(
      await t.deps.db
        .selectFrom('certificates')
        .select('domain_id')
        .where('domain_id', '=', gone.domain.id)
        .execute(),
    ).toEqual([]);
    // Asked again while those jobs wait: nothing new.
    expect(await renewCertificates(t.deps)).toEqual([]);
    // Besides the webhook deliveries (jobs too) of the certificates issued above.
    const jobs = await t.deps.db
      .selectFrom('jobs')
      .select(['kind', 'payload'])
      .where('kind', '!=', DELIVERY_JOB)
      .execute();
    expect(jobs).toHaveLength(2);
    expect(jobs.every((j) => j.kind === 'domain.certificate')).toBe(true);
    clock.set(NOW);
  });
});

describe('ACME challenges and SNI', () => {
  const clock = new ManualClock(NOW);
  let t: TestApp;
  let alice: TestUser;
  let edge: Server;
  let edgePort: number;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await t.user();
    edge = createEdgeServer({
      resolver: createHostResolver(t.deps),
      artifactsRoot: t.deps.config.artifactsDir,
      acmeChallenge: (token) => findChallenge(t.deps, token),
    });
    edgePort = await listen(edge);
  });
  afterAll(async () => {
    await new Promise<void>((r) => edge.close(() => r()));
    await t.close();
  });

  it('recognises challenge paths and their tokens only', () => {
    expect(challengeTokenOf('/.well-known/acme-challenge/abc_DEF-123')).toBe('abc_DEF-123');
    expect(challengeTokenOf('/.well-known/acme-challenge/abc?x=1')).toBe('abc');
    expect(challengeTokenOf('/.well-known/acme-challenge/../etc')).toBeNull();
    expect(challengeTokenOf('/.well-known/acme-challenge/')).toBeNull();
    expect(challengeTokenOf('/index.html')).toBeNull();
    expect(challengeTokenOf(undefined)).toBeNull();
  });

  it('the edge answers a stored challenge for any host, until it expires; other tokens are served as usual', async () => {
    await putChallenge(t.deps, {
      token: 'tok-1',
      keyAuthorization: 'tok-1.thumbprint',
      domain: 'a.example.com',
    });
    const hit = await edgeRequest(edgePort, 'a.example.com', '/.well-known/acme-challenge/tok-1');
    expect(hit).toMatchObject({ status: 200, text: 'tok-1.thumbprint' });
    expect(hit.headers['content-type']).toBe('text/plain');
    const miss = await edgeRequest(edgePort, 'a.example.com', '/.well-known/acme-challenge/other');
    expect(miss.status).toBe(404);
    expect(miss.text).toContain('Unknown host');
    clock.advance(2 * 3_600_000);
    expect((await edgeRequest(edgePort, 'a.example.com', '/.well-known/acme-challenge/tok-1')).status).toBe(
      404,
    );
    clock.set(NOW);
  });

  it('caches TLS contexts by server name, forgets misses quickly and reloads when told', async () => {
    const project = await insertProject(t, alice.orgId);
    const domainId = newId('dom');
    await t.deps.db
      .insertInto('domains')
      .values({
        id: domainId,
        project_id: project.id,
        domain: 'tls.example.com',
        status: 'verified',
        ssl_status: 'pending',
        ssl_error: null,
        verification_token: 'x',
        verified_at: NOW,
        created_at: NOW,
        updated_at: NOW,
      })
      .execute();
    let ms = 0;
    const cache = createSniCache(t.deps, { ttlMs: 60_000, missTtlMs: 1000, now: () => ms });
    expect(await cache.contextFor('tls.example.com')).toBeNull();
    await issueCertificate(t.deps, domainId);
    // Still the remembered miss...
    expect(await cache.contextFor('tls.example.com')).toBeNull();
    ms += 1500;
    // ...until it expires; names are matched without case or trailing dot.
    const ctx = await cache.contextFor('TLS.example.com.');
    expect(ctx).not.toBeNull();
    expect(await cache.contextFor('tls.example.com')).toBe(ctx);
    await issueCertificate(t.deps, domainId);
    expect(await cache.contextFor('tls.example.com')).toBe(ctx);
    cache.invalidate('tls.example.com');
    const renewed = await cache.contextFor('tls.example.com');
    expect(renewed).not.toBe(ctx);
    expect(renewed).not.toBeNull();
    // An unverified domain's certificate is never served.
    await t.deps.db.updateTable('domains').set({ status: 'pending' }).where('id', '=', domainId).execute();
    cache.invalidate();
    expect(await cache.contextFor('tls.example.com')).toBeNull();
  });
});
