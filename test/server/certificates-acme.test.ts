import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../server/core/free-port.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { tlsGet } from '../helpers/tls.ts';

const PEBBLE = '/usr/bin/pebble';
const hasPebble = existsSync(PEBBLE) && spawnSync('openssl', ['version']).status === 0;
if (!hasPebble) {
  console.warn(
    `SKIPPED: ACME issuance against pebble needs ${PEBBLE} and openssl (Debian: apt-get install pebble openssl; .ci/run installs them).`,
  );
}

/** GET over HTTPS trusting `ca`; the body as text. */
function httpsText(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(Buffer.concat(chunks).toString('utf8'))
          : reject(new Error(`${url} answered ${res.statusCode}`)),
      );
    }).on('error', reject);
  });
}

/**
 * Let's Encrypt's test CA on 127.0.0.1: pebble asks the DNS server on 127.0.0.1 where the domain
 * is, fetches the HTTP-01 answer from the edge's HTTP port, and signs. The certificate then
 * serves the domain on the edge's TLS port and chains to pebble's root.
 */
describe.skipIf(!hasPebble)('ACME certificates from pebble', () => {
  let dir: string;
  let dns: TestDnsServer;
  let pebble: ChildProcess;
  let pebbleLog = '';
  let listenerCert: string;
  let managementUrl: string;
  let s: Stack;
  let repo: GitRepo;
  let tlsPort: number;
  const DOMAIN = 'acme.shop.test';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'slipway-pebble-'));
    // pebble's own HTTPS listener needs a certificate for 127.0.0.1; the service trusts it
    // through SLIPWAY_ACME_CA_FILE.
    const made = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=pebble test listener',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { encoding: 'utf8' },
    );
    expect(made.status, made.stderr).toBe(0);
    listenerCert = readFileSync(join(dir, 'cert.pem'), 'utf8');

    dns = await startDnsServer();
    dns.a.set(DOMAIN, '127.0.0.1');
    const [edgePort, acmePort, managementPort, unusedTlsAlpnPort] = await Promise.all([
      findFreePort(),
      findFreePort(),
      findFreePort(),
      findFreePort(),
    ]);
    managementUrl = `https://127.0.0.1:${managementPort}`;
    writeFileSync(
      join(dir, 'pebble.json'),
      JSON.stringify({
        pebble: {
          listenAddress: `127.0.0.1:${acmePort}`,
          managementListenAddress: `127.0.0.1:${managementPort}`,
          certificate: join(dir, 'cert.pem'),
          privateKey: join(dir, 'key.pem'),
          // HTTP-01 validation connects here: the edge.
          httpPort: edgePort,
          tlsPort: unusedTlsAlpnPort,
          ocspResponderURL: '',
          externalAccountBindingRequired: false,
        },
      }),
    );
    pebble = spawn(PEBBLE, ['-config', join(dir, 'pebble.json'), '-dnsserver', dns.address], {
      env: {
        ...process.env,
        PEBBLE_VA_NOSLEEP: '1',
        PEBBLE_VA_ALWAYS_VALID: '0',
        PEBBLE_WFE_NONCEREJECT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    pebble.stdout!.on('data', (c: Buffer) => (pebbleLog += c.toString()));
    pebble.stderr!.on('data', (c: Buffer) => (pebbleLog += c.toString()));
    await waitFor(
      'pebble to listen',
      () => httpsText(`https://127.0.0.1:${acmePort}/dir`, listenerCert).then(Boolean, () => false),
      10_000,
    );

    // The HTTPS port is picked again right before the stack listens, and once more should another
    // test's process (a server app, a sandbox's forwarded port) take it in between.
    for (let attempt = 1; ; attempt++) {
      tlsPort = await findFreePort();
      try {
        s = await startStack({
          env: {
            SLIPWAY_EDGE_PORT: String(edgePort),
            SLIPWAY_EDGE_TLS_PORT: String(tlsPort),
            SLIPWAY_DNS_SERVERS: dns.address,
            SLIPWAY_ACME_DIRECTORY: `https://127.0.0.1:${acmePort}/dir`,
            SLIPWAY_ACME_EMAIL: 'certs@shop.test',
            SLIPWAY_ACME_CA_FILE: join(dir, 'cert.pem'),
          },
        });
        break;
      } catch (err) {
        if (attempt === 3 || !/\(the edge's HTTPS\) is already in use/.test((err as Error).message))
          throw err;
      }
    }
    repo = createGitRepo({ fromFixture: 'static-site' });
  });
  afterAll(async () => {
    await s?.stop();
    pebble?.kill('SIGKILL');
    await dns?.close();
    repo?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('orders a certificate over HTTP-01 through the edge and serves it by SNI', async () => {
    const { token, orgId } = await s.user('acme@shop.test');
    const api = s.client(token);
    const project = await api.projects.create({
      name: 'acme-shop',
      repositoryUrl: repo.url,
      organizationId: orgId,
    });
    const created = await api.deployments.create(project.id);
    await waitFor(
      'the deployment',
      async () => (await api.deployments.get(created.id)).status === 'live',
      20_000,
    );

    const added = await api.domains.add(project.id, { domain: DOMAIN });
    dns.txt.set(`_slipway-challenge.${DOMAIN}`, [[added.dnsRecords[0]!.value]]);
    expect((await api.domains.verify(project.id, DOMAIN)).status).toBe('verified');

    const res = await waitFor(
      'the certificate from pebble',
      async () => {
        const r = await fetch(`${s.apiUrl}/v1/projects/${project.id}/domains/${DOMAIN}/certificate`, {
          headers: { authorization: `Bearer ${token}` },
        });
        const body = (await r.json()) as {
          data: { sslStatus: string; sslError: string | null; certificate: any };
        };
        return body.data.sslStatus === 'pending' ? null : body.data;
      },
      20_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\npebble said:\n${pebbleLog}`);
    });
    expect(res.sslError).toBeNull();
    expect(res.sslStatus).toBe('active');
    expect(res.certificate.selfSigned).toBe(false);
    expect(res.certificate.issuer).toMatch(/^Pebble Intermediate CA/);
    // pebble fetched the challenge from the edge and looked the domain up in our DNS server.
    expect(dns.asked).toContain(`A ${DOMAIN}`);
    // The challenge answer is gone once used.
    expect(await s.running.deps.db.selectFrom('acme_challenges').selectAll().execute()).toEqual([]);
    // The account key was made once and kept.
    const accounts = await s.running.deps.db.selectFrom('acme_accounts').selectAll().execute();
    expect(accounts).toHaveLength(1);
    expect(accounts[0]).toMatchObject({
      email: 'certs@shop.test',
      account_url: expect.stringMatching(/^https:\/\/127\.0\.0\.1:/),
    });

    // A TLS request by SNI completes with the issued certificate, which chains to pebble's root.
    const root = await httpsText(`${managementUrl}/roots/0`, listenerCert);
    const tls = await tlsGet(tlsPort, DOMAIN, '/', root);
    expect(tls.authorized).toBe(true);
    expect(tls.peer.subjectaltname).toBe(`DNS:${DOMAIN}`);
    expect(tls.peer.issuer.CN).toMatch(/^Pebble Intermediate CA/);
    expect(tls.status).toBe(200);
    expect(tls.body).toContain('<h1>');
  });
});
