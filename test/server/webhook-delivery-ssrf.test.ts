import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryWorker, type DeliveryWorker } from '../../server/features/webhooks/delivery-worker.ts';
import {
  blockedReason,
  RefusedAddressError,
  resolveTarget,
  type ResolvedAddress,
} from '../../server/core/ssrf.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { startStub, type StubServer } from '../helpers/stub-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const SECRET = 'whsec-0123456789abcdef';

describe('the SSRF rule', () => {
  it.each([
    ['10.0.0.1', 'a private address'],
    ['172.16.5.4', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['fc00::1', 'a private address'],
    ['fd12:3456::1', 'a private address'],
    ['127.0.0.1', 'a loopback address'],
    ['127.255.255.254', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['169.254.169.254', 'a cloud metadata address'],
    ['fd00:ec2::254', 'a cloud metadata address'],
    ['169.254.10.20', 'a link-local address'],
    ['fe80::1', 'a link-local address'],
    ['100.64.0.1', 'a carrier-grade NAT address'],
    ['100.100.100.200', 'a carrier-grade NAT address'],
    ['0.0.0.0', 'an unspecified address'],
    ['::', 'an unspecified address'],
    ['224.0.0.251', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['255.255.255.255', 'a reserved address'],
    // IPv4-mapped IPv6 reaches the IPv4 host: judged like it, in either notation.
    ['::ffff:10.0.0.1', 'a private address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:a9fe:a9fe', 'a cloud metadata address'],
    // NAT64, 6to4 and Teredo carry an IPv4 address the packet ends up at: judged by it.
    ['64:ff9b::a9fe:a9fe', 'a cloud metadata address (169.254.169.254, embedded in this IPv6 address)'],
    ['64:ff9b::10.1.2.3', 'a private address (10.1.2.3, embedded in this IPv6 address)'],
    ['64:ff9b:1:7f00:0:100::', 'a loopback address (127.0.0.1, embedded in this IPv6 address)'],
    ['2002:a9fe:a9fe::1', 'a cloud metadata address (169.254.169.254, embedded in this IPv6 address)'],
    ['2002:c0a8:0101::', 'a private address (192.168.1.1, embedded in this IPv6 address)'],
    // Teredo: the client's address inverted in the last 32 bits (~127.0.0.1 = 80ff:fffe) ...
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'a loopback address (127.0.0.1, embedded in this IPv6 address)'],
    // ... and the Teredo server's in bits 32 to 63.
    ['2001:0:0a00:0001::1', 'a private address (10.0.0.1, embedded in this IPv6 address)'],
  ])('refuses %s as %s', (address, reason) => {
    expect(blockedReason(address)).toBe(reason);
  });

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:0808:0808::1',
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
    '2001:4860:4860::8888',
  ])('lets %s through', (address) => {
    expect(blockedReason(address)).toBeNull();
  });

  it('checks every resolved address, and takes IP literals without a look-up', async () => {
    const lookups: string[] = [];
    const lookup = async (host: string): Promise<ResolvedAddress[]> => {
      lookups.push(host);
      return [
        { address: '93.184.216.34', family: 4 },
        { address: '10.1.2.3', family: 4 },
      ];
    };
    const refused = resolveTarget('mixed.example.test', { lookup, allowPrivate: false });
    await expect(refused).rejects.toBeInstanceOf(RefusedAddressError);
    await expect(refused).rejects.toThrow(
      'refused: 10.1.2.3 is a private address (mixed.example.test resolves to it); set SLIPWAY_WEBHOOK_ALLOW_PRIVATE=true to allow',
    );
    expect(await resolveTarget('mixed.example.test', { lookup, allowPrivate: true })).toHaveLength(2);
    await expect(resolveTarget('[::1]', { lookup, allowPrivate: false })).rejects.toThrow(
      'refused: ::1 is a loopback address; set SLIPWAY_WEBHOOK_ALLOW_PRIVATE=true to allow',
    );
    expect(await resolveTarget('93.184.216.34', { lookup, allowPrivate: false })).toEqual([
      { address: '93.184.216.34', family: 4 },
    ]);
    expect(lookups).toEqual(['mixed.example.test', 'mixed.example.test']);
  });
});

describe('delivery under the SSRF rule', () => {
  let strict: TestApp;
  let open: TestApp;
  let stub: StubServer;
  const answers = new Map<string, ResolvedAddress[]>();
  const lookups: string[] = [];
  const lookup = async (host: string) => {
    lookups.push(host);
    const found = answers.get(host);
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  const workers: DeliveryWorker[] = [];

  beforeAll(async () => {
    stub = await startStub((_req, res) => {
      res.end('ok');
    });
    strict = await createTestApp({ clock: new ManualClock() });
    open = await createTestApp({ clock: new ManualClock(), env: { SLIPWAY_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    workers.push(startDeliveryWorker(strict.deps, { lookup, pollMs: 60_000 }));
    workers.push(startDeliveryWorker(open.deps, { lookup, pollMs: 60_000 }));
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all([strict.close(), open.close(), stub.close()]);
  });

  let names = 0;
  async function fire(t: TestApp, user: TestUser, url: string) {
    const p = await t.call(user, 'POST', '/v1/projects', {
      name: `guarded-${++names}`,
      repositoryUrl: 'https://example.com/repo.git',
      organizationId: user.orgId,
      framework: 'static',
    });
    const projectId = p.body.data.id as string;
    const w = await t.call(user, 'POST', `/v1/projects/${projectId}/webhooks`, {
      url,
      events: ['deployment.created'],
      secret: SECRET,
    });
    expect(w.status).toBe(201);
    expect((await t.call(user, 'POST', `/v1/projects/${projectId}/deployments`, {})).status).toBe(201);
    const webhookId = w.body.data.id as string;
    return waitFor('the attempt', async () => {
      const res = await t.call(user, 'GET', `/v1/projects/${projectId}/webhooks/${webhookId}/deliveries`);
      const [d] = res.body.data;
      return d?.attempts.length > 0 && d;
    });
  }

  it.each([
    ['10.0.0.1', 4, 'a private address'],
    ['169.254.169.254', 4, 'a cloud metadata address'],
    ['::1', 6, 'a loopback address'],
  ] as const)('refuses a name resolving to %s once, without retrying', async (address, family, reason) => {
    const user = await strict.user();
    const host = `internal-${names + 1}.example.test`;
    answers.set(host, [{ address, family }]);
    const d = await fire(strict, user, `https://${host}/hook`);
    expect(d).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(d.attempts).toEqual([
      {
        at: expect.any(String),
        statusCode: null,
        durationMs: expect.any(Number),
        error: `refused: ${address} is ${reason} (${host} resolves to it); set SLIPWAY_WEBHOOK_ALLOW_PRIVATE=true to allow`,
      },
    ]);
    expect(lookups).toContain(host);
  });

  it('refuses a loopback URL with a live receiver behind it', async () => {
    const user = await strict.user();
    const d = await fire(strict, user, `${stub.url}/hook`);
    expect(d.status).toBe('failed');
    expect(d.attempts[0].error).toBe(
      'refused: 127.0.0.1 is a loopback address; set SLIPWAY_WEBHOOK_ALLOW_PRIVATE=true to allow',
    );
    expect(stub.requests).toEqual([]);
  });

  it('connects to the address it checked, keeping the host name in Host (no second look-up)', async () => {
    const user = await open.user();
    const port = new URL(stub.url).port;
    // `.test` never resolves for real: reaching the stub proves the checked answer was used.
    answers.set('pinned.example.test', [{ address: '127.0.0.1', family: 4 }]);
    const before = lookups.length;
    const d = await fire(open, user, `http://pinned.example.test:${port}/hook`);
    expect(d).toMatchObject({ status: 'success', attempts: [expect.objectContaining({ statusCode: 200 })] });
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]!.headers.host).toBe(`pinned.example.test:${port}`);
    expect(lookups.slice(before)).toEqual(['pinned.example.test']);
  });

  it('retries a name that does not resolve', async () => {
    const user = await open.user();
    const d = await fire(open, user, 'http://nowhere.example.test/hook');
    expect(d).toMatchObject({ status: 'pending', nextAttemptAt: expect.any(String) });
    expect(d.attempts[0].error).toBe('could not resolve nowhere.example.test (ENOTFOUND)');
  });
});
