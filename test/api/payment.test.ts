import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, ledgerPayer } from '../../api/client/index.ts';
import {
  decodeChargeRequest,
  decodeJson,
  encodeJson,
  formatChallenge,
  formatCredential,
  formatReceipt,
  parseAuthChallenges,
  parseCredential,
  parsePaymentChallenges,
  parseReceipt,
  PaymentFormatError,
  type PaymentChallenge,
} from '../../api/payment.ts';
import { addCredits } from '../../server/features/billing/credits.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';

const challenge: PaymentChallenge = {
  id: 'qB3wErTyU7iOpAsD9fGhJk',
  realm: 'api.example.com',
  method: 'ledger',
  intent: 'charge',
  request: encodeJson({ amount: '100', currency: 'usd' }),
  expires: '2026-11-22T10:05:00.000Z',
};

describe('api/payment: the Payment scheme encoding', () => {
  it('writes base64url JSON without padding and reads it back', () => {
    const encoded = encodeJson({ amount: '100', currency: 'usd' });
    expect(encoded).toBe('eyJhbW91bnQiOiIxMDAiLCJjdXJyZW5jeSI6InVzZCJ9');
    expect(encodeJson({ a: '?>' })).not.toMatch(/[+/=]/);
    expect(decodeJson(encodeJson({ a: '?>ü' }))).toEqual({ a: '?>ü' });
    expect(() => decodeJson('abc=')).toThrow(PaymentFormatError);
    expect(() => decodeJson('bm90IGpzb24')).toThrow(/not base64url-encoded JSON/);
  });

  it('formats a challenge as WWW-Authenticate auth-params and parses it back', () => {
    const header = formatChallenge(challenge);
    expect(header).toBe(
      'Payment id="qB3wErTyU7iOpAsD9fGhJk", realm="api.example.com", method="ledger", intent="charge", ' +
        'request="eyJhbW91bnQiOiIxMDAiLCJjdXJyZW5jeSI6InVzZCJ9", expires="2026-11-22T10:05:00.000Z"',
    );
    expect(parsePaymentChallenges(header)).toEqual([challenge]);
    expect(decodeChargeRequest(challenge)).toEqual({ amount: '100', currency: 'usd' });
  });

  it('escapes and unescapes quoted strings', () => {
    const odd = { ...challenge, description: 'say "hi" \\ bye' };
    const header = formatChallenge(odd);
    expect(header).toContain('description="say \\"hi\\" \\\\ bye"');
    expect(parsePaymentChallenges(header)).toEqual([odd]);
  });

  it('finds Payment challenges among others, in any case and spacing, with tokens and token68', () => {
    const header =
      'Basic dXNlcjpwYXNz==, Bearer realm="api", error="invalid_token", ' +
      `payment  ID=abc , realm = "r", method=ledger, intent="charge", request="${challenge.request}", ` +
      `Payment id="second", realm="r", method="stripe", intent="charge", request="${challenge.request}"`;
    expect(parseAuthChallenges(header).map((c) => c.scheme)).toEqual([
      'Basic',
      'Bearer',
      'payment',
      'Payment',
    ]);
    expect(parseAuthChallenges(header)[0]).toEqual({
      scheme: 'Basic',
      params: {},
      token68: 'dXNlcjpwYXNz==',
    });
    expect(parsePaymentChallenges(header)).toEqual([
      { id: 'abc', realm: 'r', method: 'ledger', intent: 'charge', request: challenge.request },
      { id: 'second', realm: 'r', method: 'stripe', intent: 'charge', request: challenge.request },
    ]);
  });

  it('skips Payment challenges missing a required parameter and rejects broken syntax', () => {
    expect(parsePaymentChallenges('Payment id="x", realm="r"')).toEqual([]);
    expect(() => parseAuthChallenges('Payment id="unterminated')).toThrow(/unterminated/);
    expect(() => parseAuthChallenges('Payment id="x", realm=, method="ledger"')).toThrow(/expected a value/);
  });

  it('round-trips a credential and says what is wrong with a bad one', () => {
    const header = formatCredential({ challenge, payload: {} });
    expect(header).toMatch(/^Payment [A-Za-z0-9_-]+$/);
    expect(parseCredential(header)).toEqual({ challenge, payload: {} });
    expect(() => parseCredential('Bearer abc')).toThrow(/must be "Payment <base64url JSON>"/);
    expect(() => parseCredential('Payment')).toThrow(PaymentFormatError);
    expect(() => parseCredential(`Payment ${encodeJson({ challenge: { id: 'x' }, payload: {} })}`)).toThrow(
      /challenge\.realm/,
    );
    expect(() => parseCredential(`Payment ${encodeJson({ challenge })}`)).toThrow(/payload/);
  });

  it('checks the charge request', () => {
    expect(() => decodeChargeRequest({ request: encodeJson({ amount: '1.00', currency: 'usd' }) })).toThrow(
      /amount: must be a whole number of base units/,
    );
    expect(() => decodeChargeRequest({ request: encodeJson({ amount: '100', currency: 'USD' }) })).toThrow(
      /currency/,
    );
    expect(
      decodeChargeRequest({ request: encodeJson({ amount: '0', currency: 'eur', recipient: 'x' }) }),
    ).toEqual({
      amount: '0',
      currency: 'eur',
      recipient: 'x',
    });
  });

  it('round-trips a receipt', () => {
    const receipt = {
      status: 'success' as const,
      method: 'ledger',
      timestamp: '2026-11-22T10:00:00.000Z',
      reference: 'chg_1',
    };
    expect(parseReceipt(formatReceipt(receipt))).toEqual(receipt);
    expect(() => parseReceipt(encodeJson({ ...receipt, status: 'failed' }))).toThrow(PaymentFormatError);
  });
});

describe('api/client with ledgerPayer against a real server', () => {
  let t: TestApp;
  let baseUrl: string;
  let user: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    user = await t.user('client-payer@example.com');
    await addCredits(t.deps, user.orgId, 200);
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => t.close());

  const charges = async () =>
    (await t.deps.db.selectFrom('ledger_entries').select('id').where('kind', '=', 'charge').execute()).length;

  it('pays a 402 once and repeats the request with the same Idempotency-Key', async () => {
    const sent: { key: string | null; paid: boolean }[] = [];
    const client = createClient({
      baseUrl,
      token: user.token,
      onPaymentRequired: ledgerPayer({ maxAmount: 100 }),
      fetch: (url, init) => {
        const headers = new Headers(init.headers);
        sent.push({ key: headers.get('idempotency-key'), paid: headers.has('payment-authorization') });
        return fetch(url, init);
      },
    });
    const res = await client.request('POST', '/api/v1/projects', {
      body: { name: 'from-client', repositoryUrl: 'https://example.com/r.git' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^prj_/), name: 'from-client', status: 'active' });
    expect(parseReceipt(res.headers.get('payment-receipt')!).method).toBe('ledger');
    expect(sent).toHaveLength(2);
    expect(sent.map((s) => s.paid)).toEqual([false, true]);
    expect(sent[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[1]!.key).toBe(sent[0]!.key);
    expect(await charges()).toBe(1);
  });

  it('throws the 402 without a payer, over the limit, and when the payment is refused', async () => {
    const body = { name: 'not-paid', repositoryUrl: 'https://example.com/r.git' };
    const bare = createClient({ baseUrl, token: user.token });
    await expect(bare.request('POST', '/api/v1/projects', { body })).rejects.toMatchObject({
      status: 402,
      code: 'PAYMENT_REQUIRED',
    });
    const frugal = createClient({
      baseUrl,
      token: user.token,
      onPaymentRequired: ledgerPayer({ maxAmount: 99 }),
    });
    await expect(frugal.request('POST', '/api/v1/projects', { body })).rejects.toMatchObject({ status: 402 });
    const payer = createClient({ baseUrl, token: user.token, onPaymentRequired: ledgerPayer() });
    expect(
      (await payer.request('POST', '/api/v1/projects', { body: { ...body, name: 'last-dollar' } })).status,
    ).toBe(201);
    await expect(payer.request('POST', '/api/v1/projects', { body })).rejects.toMatchObject({
      status: 402,
      code: 'PAYMENT_REQUIRED',
      message: expect.stringMatching(/balance .* is 0\.00 USD/),
    });
    expect(await charges()).toBe(2);
  });
});
