import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors.ts';
import { createClient } from '../../api/client/index.ts';
import type { ClientOptions } from '../../api/client/options.ts';
import { sendJson, startStub, type StubServer } from '../helpers/stub-server.ts';
import { failure, ok, project } from './client-fixtures.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const body = { name: 'web', repositoryUrl: 'https://example.com/repo.git', organizationId: 'org_x' };

describe('client retries and errors (stub server)', () => {
  let stub: StubServer | undefined;
  let sleeps: number[];
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });

  /** A client whose waits are recorded instead of slept, with jitter fixed at the middle. */
  function clientFor(url: string, extra: Partial<ClientOptions> = {}) {
    sleeps = [];
    return createClient({
      baseUrl: url,
      token: 'slw_test',
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0.5,
      ...extra,
    });
  }

  async function rejection(p: Promise<unknown>): Promise<ApiError> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }

  it('waits Retry-After seconds on 429, then answers the unwrapped data', async () => {
    stub = await startStub((_req, res, i) =>
      i === 0
        ? sendJson(res, 429, failure('RATE_LIMIT_EXCEEDED', 'slow down'), {
            'retry-after': '2',
            'x-ratelimit-limit': '100',
            'x-ratelimit-remaining': '0',
            'x-ratelimit-reset': '1800000000',
          })
        : sendJson(res, 200, ok(project()), {
            'x-ratelimit-limit': '100',
            'x-ratelimit-remaining': '99',
            'x-ratelimit-reset': '1800003600',
          }),
    );
    const client = clientFor(stub.url);
    const p = await client.projects.get('prj_aaaaaaaaaaaaaaaaaaaa');
    expect(p).toEqual(project());
    expect(sleeps).toEqual([2000]);
    expect(stub.requests).toHaveLength(2);
    expect(client.rateLimit).toEqual({ limit: 100, remaining: 99, reset: 1800003600 });
  });

  it('backs off exponentially on 503 and 504 and succeeds on the third attempt', async () => {
    stub = await startStub((_req, res, i) =>
      i < 2
        ? sendJson(res, i === 0 ? 503 : 504, failure('SERVICE_UNAVAILABLE', 'later'))
        : sendJson(res, 200, ok(project())),
    );
    const client = clientFor(stub.url);
    expect((await client.projects.get('prj_aaaaaaaaaaaaaaaaaaaa')).name).toBe('web');
    // 500 ms then 1000 ms windows, jitter 0.5 -> three quarters of each.
    expect(sleeps).toEqual([375, 750]);
    expect(stub.requests).toHaveLength(3);
  });

  it('caps the backoff and gives up after five attempts with the last error', async () => {
    stub = await startStub((_req, res) =>
      sendJson(res, 503, failure('SERVICE_UNAVAILABLE', 'database unreachable')),
    );
    const client = clientFor(stub.url, { maxDelayMs: 1000, random: () => 0.999 });
    const err = await rejection(client.projects.list());
    expect(err).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', message: 'database unreachable' });
    expect(stub.requests).toHaveLength(5);
    expect(sleeps).toHaveLength(4);
    expect(sleeps[0]).toBeLessThanOrEqual(500);
    expect(sleeps.slice(1).every((ms) => ms >= 500 && ms <= 1000)).toBe(true);
  });

  it('sends the same generated Idempotency-Key and body on every retry of one POST', async () => {
    stub = await startStub((_req, res, i) =>
      i < 2 ? sendJson(res, 503, failure('SERVICE_UNAVAILABLE', 'later')) : sendJson(res, 201, ok(project())),
    );
    const client = clientFor(stub.url);
    await client.projects.create(body);
    await client.projects.create(body);
    const keys = stub.requests.map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(4);
    expect(keys[0]).toMatch(UUID);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).toBe(keys[0]);
    // A new logical call gets a new key.
    expect(keys[3]).toMatch(UUID);
    expect(keys[3]).not.toBe(keys[0]);
    expect(stub.requests.map((r) => JSON.parse(r.body))).toEqual([body, body, body, body]);
    expect(stub.requests[0]!.headers['content-type']).toBe('application/json');
  });

  it('uses the caller’s Idempotency-Key', async () => {
    stub = await startStub((_req, res) => sendJson(res, 201, ok(project())));
    const client = clientFor(stub.url);
    await client.projects.create(body, { idempotencyKey: 'deploy-run-42' });
    await client.request('POST', '/v1/projects', { body, headers: { 'Idempotency-Key': 'from-header' } });
    expect(stub.requests.map((r) => r.headers['idempotency-key'])).toEqual(['deploy-run-42', 'from-header']);
  });

  it('never retries a POST sent without an Idempotency-Key', async () => {
    stub = await startStub((_req, res) => sendJson(res, 503, failure('SERVICE_UNAVAILABLE', 'later')));
    const client = clientFor(stub.url);
    const err = await rejection(client.projects.create(body, { idempotencyKey: false }));
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]!.headers['idempotency-key']).toBeUndefined();
    expect(sleeps).toEqual([]);
    const raw = await rejection(
      client.request('POST', '/v1/projects', { body, idempotencyKey: false, headers: {} }),
    );
    expect(raw.status).toBe(503);
    expect(stub.requests).toHaveLength(2);
  });

  it('turns a proxy’s HTML 502 into SERVICE_UNAVAILABLE with a readable message', async () => {
    stub = await startStub((req, res) => {
      res.writeHead(req.url.startsWith('/v1/projects') ? 502 : 500, { 'content-type': 'text/html' });
      res.end(
        '<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1>nginx</body></html>',
      );
    });
    const client = clientFor(stub.url, { retries: 0 });
    const err = await rejection(client.projects.list());
    expect(err.status).toBe(502);
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.message).toBe(
      'GET /v1/projects answered HTTP 502 Bad Gateway with text/html instead of a Slipway error: "502 Bad Gateway Bad Gateway nginx". The service or a proxy in front of it is unavailable; try again in a moment.',
    );
    const internal = await rejection(client.user.get());
    expect(internal).toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
    expect(internal.message).toContain('GET /v1/user answered HTTP 500');
  });

  it('retries a 502 HTML page and then succeeds', async () => {
    stub = await startStub((_req, res, i) => {
      if (i > 0) return sendJson(res, 200, ok(project()));
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<h1>Bad Gateway</h1>');
    });
    const client = clientFor(stub.url);
    expect((await client.projects.get('prj_aaaaaaaaaaaaaaaaaaaa')).id).toBe('prj_aaaaaaaaaaaaaaaaaaaa');
    expect(stub.requests).toHaveLength(2);
  });

  it('throws a 429 at once when Retry-After is longer than the client will wait', async () => {
    stub = await startStub((_req, res) =>
      sendJson(res, 429, failure('RATE_LIMIT_EXCEEDED', 'Rate limit of 100 requests per hour exceeded'), {
        'retry-after': '3000',
        'x-ratelimit-limit': '100',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1800000000',
      }),
    );
    const client = clientFor(stub.url);
    const err = await rejection(client.user.get());
    expect(err).toMatchObject({ status: 429, code: 'RATE_LIMIT_EXCEEDED' });
    expect(stub.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(client.rateLimit).toEqual({ limit: 100, remaining: 0, reset: 1800000000 });
  });

  it('retries a dropped connection and a request that timed out', async () => {
    stub = await startStub((_req, res, i) => {
      if (i === 0) return void res.socket?.destroy();
      if (i === 1) return; // never answers: the client's time limit ends the attempt
      sendJson(res, 200, ok(project()));
    });
    const client = clientFor(stub.url, { timeoutMs: 200 });
    expect((await client.projects.get('prj_aaaaaaaaaaaaaaaaaaaa')).name).toBe('web');
    expect(stub.requests).toHaveLength(3);
    expect(sleeps).toEqual([375, 750]);
  });

  it('reports an unreachable service as SERVICE_UNAVAILABLE after the last attempt', async () => {
    const gone = await startStub(() => undefined);
    const url = gone.url;
    await gone.close();
    const client = clientFor(url, { retries: 2 });
    const err = await rejection(client.user.get());
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.status).toBe(503);
    expect(err.message).toMatch(
      /^GET \/v1\/user failed after 3 attempts: fetch failed \(.*ECONNREFUSED.*\)\./,
    );
    expect(err.cause).toBeInstanceOf(Error);
    expect(sleeps).toHaveLength(2);
  });

  it('stops waiting and retrying when the caller aborts', async () => {
    stub = await startStub((_req, res) => sendJson(res, 503, failure('SERVICE_UNAVAILABLE', 'later')));
    const controller = new AbortController();
    const client = createClient({
      baseUrl: stub.url,
      token: 'slw_test',
      sleep: async (_ms, signal) => {
        controller.abort(new Error('cancelled by the test'));
        if (signal?.aborted) throw signal.reason;
      },
    });
    await expect(client.user.get({ signal: controller.signal })).rejects.toThrow('cancelled by the test');
    expect(stub.requests).toHaveLength(1);
  });

  it('reads the bare { code, message } error of /api/v1 and gives the 402 to the payment hook', async () => {
    const challenge = 'Payment id="abc", realm="127.0.0.1", method="ledger", intent="charge"';
    stub = await startStub((req, res) => {
      if (req.headers['payment-authorization'] === 'Payment credential') {
        return sendJson(res, 201, { id: 'prj_aaaaaaaaaaaaaaaaaaaa', name: 'web', status: 'active' });
      }
      sendJson(
        res,
        402,
        { code: 'PAYMENT_REQUIRED', message: 'Pay 1.00 USD', challengeId: 'abc' },
        {
          'www-authenticate': challenge,
        },
      );
    });
    const seen: unknown[] = [];
    const paying = clientFor(stub.url, {
      onPaymentRequired: async (c) => {
        seen.push(c);
        return { 'Payment-Authorization': 'Payment credential' };
      },
    });
    const res = await paying.request('POST', '/api/v1/projects', {
      body: { name: 'web', repositoryUrl: 'file:///r' },
    });
    expect(res).toMatchObject({ status: 201, body: { id: 'prj_aaaaaaaaaaaaaaaaaaaa', status: 'active' } });
    expect(seen).toEqual([
      {
        method: 'POST',
        path: '/api/v1/projects',
        wwwAuthenticate: challenge,
        body: { code: 'PAYMENT_REQUIRED', message: 'Pay 1.00 USD', challengeId: 'abc' },
        attempt: 0,
      },
    ]);
    const [first, second] = stub.requests;
    expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);

    const declining = clientFor(stub.url, { onPaymentRequired: async () => null });
    const err = await rejection(declining.request('POST', '/api/v1/projects', { body: {} }));
    expect(err).toMatchObject({ status: 402, code: 'PAYMENT_REQUIRED', message: 'Pay 1.00 USD' });
    const without = clientFor(stub.url);
    expect((await rejection(without.request('POST', '/api/v1/deployments', { body: {} }))).code).toBe(
      'PAYMENT_REQUIRED',
    );
  });

  it('rejects a success body that breaks the contract, naming the fields', async () => {
    stub = await startStub((_req, res) => sendJson(res, 200, ok(project({ id: 42, status: 'weird' }))));
    const err = await rejection(clientFor(stub.url).projects.get('prj_aaaaaaaaaaaaaaaaaaaa'));
    expect(err.code).toBe('INTERNAL_ERROR');
    expect(err.message).toContain('GET /v1/projects/prj_aaaaaaaaaaaaaaaaaaaa answered HTTP 200 with a body');
    expect((err.details as { path: string }[]).map((d) => d.path)).toEqual(['data.id', 'data.status']);
  });

  it('sends token, User-Agent and query, and accepts a base URL ending in /v1/', async () => {
    stub = await startStub((_req, res) =>
      sendJson(res, 200, { success: true, data: [], meta: { page: 2, limit: 5, total: 5 } }),
    );
    const client = clientFor(`${stub.url}/v1/`, {
      userAgent: 'slipway-action/1',
      headers: { 'x-request-id': 'run-7' },
    });
    const page = await client.projects.list({ page: 2, limit: 5, status: undefined, org: 'acme' });
    expect(page).toEqual({ data: [], meta: { page: 2, limit: 5, total: 5 } });
    const [req] = stub.requests;
    expect(req!.url).toBe('/v1/projects?page=2&limit=5&org=acme');
    expect(req!.headers).toMatchObject({
      authorization: 'Bearer slw_test',
      'user-agent': 'slipway-action/1',
      accept: 'application/json',
      'x-request-id': 'run-7',
    });
    expect(req!.headers['idempotency-key']).toBeUndefined();
    expect(req!.headers['content-type']).toBeUndefined();
  });
});
