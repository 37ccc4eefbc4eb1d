import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeChargeRequest,
  encodeJson,
  parsePaymentChallenges,
  parseReceipt,
  type PaymentChallenge,
} from '../../api/payment.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { ManualClock } from '../helpers/clock.ts';
import { addMember } from '../helpers/members.ts';
import { challengeFor, credentialFor, ledgerOf, payAndCall, topUp } from '../helpers/payments.ts';

const PROJECTS = '/api/v1/projects';
const DEPLOYMENTS = '/api/v1/deployments';
const repo = 'https://example.com/repo.git';

describe('paid operations under /api/v1', () => {
  const clock = new ManualClock('2026-11-22T10:00:00.000Z');
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await t.user('alice@example.com');
    bob = await t.user('bob@example.com');
    await topUp(t, alice, 2500);
  });
  afterAll(() => t.close());

  const balance = async (user: TestUser) => {
    const res = await t.call(user, 'GET', `/v1/organizations/${user.orgId}/billing`);
    expect(res.status).toBe(200);
    return res.body.data.balance.amount as string;
  };

  /** Asserts a refusal: 402, no-store, the message, and a fresh challenge unlike the refused one. */
  const expectRefused = (
    res: Awaited<ReturnType<TestApp['call']>>,
    message: RegExp,
    refused?: PaymentChallenge,
  ) => {
    expect(res.status).toBe(402);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      code: 'PAYMENT_REQUIRED',
      message: expect.stringMatching(message),
      challengeId: expect.any(String),
    });
    const [fresh] = parsePaymentChallenges(String(res.headers['www-authenticate']));
    expect(fresh?.id).toBe(res.body.challengeId);
    if (refused) expect(fresh?.id).not.toBe(refused.id);
  };

  it('answers a request without a credential with a 402 challenge that the api/ parser reads back', async () => {
    const res = await t.call(alice, 'POST', PROJECTS, { name: 'unpaid', repositoryUrl: repo });
    expect(res.status).toBe(402);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      code: 'PAYMENT_REQUIRED',
      message: expect.stringContaining('POST /api/v1/projects costs 1.00 USD'),
      challengeId: expect.stringMatching(/^[A-Za-z0-9_-]{64}$/),
    });
    const header = String(res.headers['www-authenticate']);
    expect(header).toMatch(
      /^Payment id="[A-Za-z0-9_-]+", realm="[^"]+", method="ledger", intent="charge", request="[A-Za-z0-9_-]+", expires="[^"]+"$/,
    );
    const challenges = parsePaymentChallenges(header);
    expect(challenges).toHaveLength(1);
    const [challenge] = challenges as [PaymentChallenge];
    expect(challenge).toEqual({
      id: res.body.challengeId,
      realm: 'localhost:80',
      method: 'ledger',
      intent: 'charge',
      request: encodeJson({ amount: '100', currency: 'usd' }),
      expires: '2026-11-22T10:05:00.000Z',
    });
    expect(challenge.request).toBe('eyJhbW91bnQiOiIxMDAiLCJjdXJyZW5jeSI6InVzZCJ9');
    expect(decodeChargeRequest(challenge)).toEqual({ amount: '100', currency: 'usd' });
    // Nothing happened: no project, no charge.
    const list = await t.call(alice, 'GET', `/v1/projects?org=${alice.orgId}`);
    expect(list.body.data.map((p: { name: string }) => p.name)).not.toContain('unpaid');
    expect(await balance(alice)).toBe('25.00');
  });

  it('validates the body before asking for payment: a bad body is a 400, never a charge', async () => {
    const bad = await t.call(alice, 'POST', PROJECTS, { name: '-Bad', repositoryUrl: 'ftp://x', extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/name.*repositoryUrl.*extra|extra/),
    });
    expect(bad.headers['www-authenticate']).toBeUndefined();
    const challenge = await challengeFor(t, alice, PROJECTS, { name: 'valid', repositoryUrl: repo });
    const paidButBad = await t.call(
      alice,
      'POST',
      PROJECTS,
      { repositoryUrl: repo },
      {
        'payment-authorization': credentialFor(challenge),
      },
    );
    expect(paidButBad.status).toBe(400);
    expect(paidButBad.body.code).toBe('VALIDATION_ERROR');
    expect(paidButBad.body.message).toMatch(/name/);
    const missing = await t.call(alice, 'POST', DEPLOYMENTS, {});
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/projectId/);
    expect(await balance(alice)).toBe('25.00');
  });

  it('answers 401 without a token, unenveloped', async () => {
    const res = await t.call(null, 'POST', PROJECTS, { name: 'anon', repositoryUrl: repo });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: 'UNAUTHORIZED', message: expect.any(String) });
  });

  it('creates a project in the personal organization, debits 1.00 and returns a receipt', async () => {
    const res = await payAndCall(t, alice, PROJECTS, {
      name: 'paid-web',
      repositoryUrl: repo,
      branch: 'trunk',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^prj_/), name: 'paid-web', status: 'active' });
    const receipt = parseReceipt(String(res.headers['payment-receipt']));
    expect(receipt).toEqual({
      status: 'success',
      method: 'ledger',
      timestamp: '2026-11-22T10:00:00.000Z',
      reference: expect.stringMatching(/^chg_[a-z0-9]{20}$/),
    });
    const project = await t.call(alice, 'GET', `/v1/projects/${res.body.id}`);
    expect(project.body.data).toMatchObject({
      organizationId: alice.orgId,
      branch: 'trunk',
      repositoryUrl: repo,
    });
    const charge = (await ledgerOf(t, alice.orgId)).find((e) => e.id === receipt.reference);
    expect(charge).toMatchObject({
      amount_cents: -100,
      kind: 'charge',
      method: 'ledger',
      reference: res.body.id,
      operation: 'POST /api/v1/projects',
      user_id: alice.userId,
    });
    expect(await balance(alice)).toBe('24.00');
  });

  it('starts a paid deployment of a project', async () => {
    const before = await balance(alice);
    const project = await t.call(alice, 'POST', '/v1/projects', {
      name: 'deploy-me',
      repositoryUrl: repo,
      organizationId: alice.orgId,
    });
    const res = await payAndCall(t, alice, DEPLOYMENTS, {
      projectId: project.body.data.id,
      branch: 'feature/x',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^dpl_/), status: 'queued' });
    const deployment = await t.call(alice, 'GET', `/v1/deployments/${res.body.id}`);
    expect(deployment.body.data).toMatchObject({
      projectId: project.body.data.id,
      branch: 'feature/x',
      target: 'preview',
    });
    const reference = parseReceipt(String(res.headers['payment-receipt'])).reference;
    const charge = (await ledgerOf(t, alice.orgId)).find((e) => e.id === reference);
    expect(charge).toMatchObject({ reference: res.body.id, operation: 'POST /api/v1/deployments' });
    expect(Number(await balance(alice))).toBe(Number(before) - 1);
  });

  describe('refuses with a fresh challenge and a message saying why', () => {
    const body = { name: 'refused', repositoryUrl: repo };

    it('a tampered challenge id', async () => {
      const ch = await challengeFor(t, alice, PROJECTS, body);
      const id = ch.id.slice(0, 10) + (ch.id[10] === 'A' ? 'B' : 'A') + ch.id.slice(11);
      const res = await t.call(alice, 'POST', PROJECTS, body, {
        'payment-authorization': credentialFor({ ...ch, id }),
      });
      expectRefused(res, /challenge id is unknown.*parameters were changed/, ch);
    });

    it('a challenge whose other parameters were changed', async () => {
      const ch = await challengeFor(t, alice, PROJECTS, body);
      const later = { ...ch, expires: '2030-01-01T00:00:00.000Z' };
      const res = await t.call(alice, 'POST', PROJECTS, body, {
        'payment-authorization': credentialFor(later),
      });
      expectRefused(res, /unknown/, ch);
    });

    it('a challenge of another user', async () => {
      const ch = await challengeFor(t, alice, PROJECTS, body);
      await topUp(t, bob, 500);
      const res = await t.call(bob, 'POST', PROJECTS, body, { 'payment-authorization': credentialFor(ch) });
      expectRefused(res, /issued to another user/, ch);
    });

    it('an expired challenge', async () => {
      const ch = await challengeFor(t, alice, PROJECTS, body);
      clock.advance(5 * 60_000 + 1);
      const res = await t.call(alice, 'POST', PROJECTS, body, { 'payment-authorization': credentialFor(ch) });
      expectRefused(res, /expired at 2026-11-22T10:05:00\.000Z/, ch);
      const [fresh] = parsePaymentChallenges(String(res.headers['www-authenticate']));
      expect(Date.parse(fresh!.expires!)).toBe(clock.now().getTime() + 5 * 60_000);
    });

    it('a challenge that was already used', async () => {
      const ch = await challengeFor(t, alice, PROJECTS, { name: 'first-use', repositoryUrl: repo });
      const credential = credentialFor(ch);
      const first = await t.call(
        alice,
        'POST',
        PROJECTS,
        { name: 'first-use', repositoryUrl: repo },
        { 'payment-authorization': credential },
      );
      expect(first.status).toBe(201);
      const charges = (await ledgerOf(t, alice.orgId)).length;
      const again = await t.call(
        alice,
        'POST',
        PROJECTS,
        { name: 'second-use', repositoryUrl: repo },
        { 'payment-authorization': credential },
      );
      expectRefused(again, /already used/, ch);
      expect(await ledgerOf(t, alice.orgId)).toHaveLength(charges);
      const list = await t.call(alice, 'GET', `/v1/projects?org=${alice.orgId}&limit=100`);
      expect(list.body.data.map((p: { name: string }) => p.name)).not.toContain('second-use');
    });

    it('a wrong amount', async () => {
      const ch = await challengeFor(t, alice, PROJECTS, body);
      const cheap = { ...ch, request: encodeJson({ amount: '1', currency: 'usd' }) };
      const res = await t.call(alice, 'POST', PROJECTS, body, {
        'payment-authorization': credentialFor(cheap),
      });
      expectRefused(res, /asks for 1 usd .* costs 100 usd/, ch);
    });

    it('a challenge for another operation', async () => {
      const ch = await challengeFor(t, alice, PROJECTS, body);
      const res = await t.call(
        alice,
        'POST',
        DEPLOYMENTS,
        { projectId: 'prj_whatever0000000000' },
        {
          'payment-authorization': credentialFor(ch),
        },
      );
      expectRefused(res, /issued for POST \/api\/v1\/projects, not POST \/api\/v1\/deployments/, ch);
    });

    it('a balance too small, leaving nothing behind', async () => {
      const poor = await t.user('poor@example.com');
      await topUp(t, poor, 50);
      const res = await payAndCall(t, poor, PROJECTS, { name: 'cannot-afford', repositoryUrl: repo });
      expectRefused(res, /balance of organization poor is 0\.50 USD and this operation costs 1\.00 USD/);
      const list = await t.call(poor, 'GET', `/v1/projects?org=${poor.orgId}`);
      expect(list.body.meta.total).toBe(0);
      expect(await balance(poor)).toBe('0.50');
    });

    it('a malformed credential, an unknown method and a non-empty ledger payload', async () => {
      const garbage = await t.call(alice, 'POST', PROJECTS, body, { 'payment-authorization': 'Payment %%%' });
      expectRefused(garbage, /not a Payment credential/);
      const wrongScheme = await t.call(alice, 'POST', PROJECTS, body, {
        'payment-authorization': 'Bearer abc',
      });
      expectRefused(wrongScheme, /not a Payment credential/);
      const ch = await challengeFor(t, alice, PROJECTS, body);
      const stripe = await t.call(alice, 'POST', PROJECTS, body, {
        'payment-authorization': credentialFor({ ...ch, method: 'stripe' }),
      });
      expectRefused(stripe, /"stripe" is not accepted; use ledger/, ch);
      const payload = await t.call(alice, 'POST', PROJECTS, body, {
        'payment-authorization': credentialFor(ch, { payload: { card: '4242' } }),
      });
      expectRefused(payload, /empty payload/, ch);
    });
  });

  it('charges nothing when the operation fails after payment (duplicate name)', async () => {
    const charges = (await ledgerOf(t, alice.orgId)).length;
    const before = await balance(alice);
    const ch = await challengeFor(t, alice, PROJECTS, { name: 'paid-web', repositoryUrl: repo });
    const dup = await t.call(
      alice,
      'POST',
      PROJECTS,
      { name: 'paid-web', repositoryUrl: repo },
      {
        'payment-authorization': credentialFor(ch),
      },
    );
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ code: 'CONFLICT', message: expect.stringContaining('paid-web') });
    expect(dup.headers['payment-receipt']).toBeUndefined();
    expect(await ledgerOf(t, alice.orgId)).toHaveLength(charges);
    expect(await balance(alice)).toBe(before);
    // The challenge was not spent: it still pays for another request.
    const retry = await t.call(
      alice,
      'POST',
      PROJECTS,
      { name: 'paid-web-2', repositoryUrl: repo },
      {
        'payment-authorization': credentialFor(ch),
      },
    );
    expect(retry.status).toBe(201);
  });

  it('answers 404 for a project of another organization and 403 for a viewer, charging nothing', async () => {
    const secret = await t.call(bob, 'POST', '/v1/projects', {
      name: 'bobs',
      repositoryUrl: repo,
      organizationId: bob.orgId,
    });
    const before = await balance(alice);
    const notFound = await payAndCall(t, alice, DEPLOYMENTS, { projectId: secret.body.data.id });
    expect(notFound.status).toBe(404);
    expect(notFound.body).toEqual({
      code: 'NOT_FOUND',
      message: expect.stringContaining(secret.body.data.id),
    });
    await addMember(t, bob.orgId, alice, 'viewer');
    const forbidden = await payAndCall(t, alice, DEPLOYMENTS, { projectId: secret.body.data.id });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe('FORBIDDEN');
    expect(await balance(alice)).toBe(before);
  });

  it('answers unknown /api/v1 routes with an unenveloped 404', async () => {
    const res = await t.call(alice, 'POST', '/api/v1/domains', {});
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'NOT_FOUND', message: expect.any(String) });
  });

  describe('GET /v1/organizations/<id>/billing', () => {
    it('shows the balance and the charges, newest first, paginated', async () => {
      const org = await t.user('billing@example.com');
      await topUp(t, org, 1000);
      const names = ['b-one', 'b-two', 'b-three'];
      for (const name of names) {
        expect((await payAndCall(t, org, PROJECTS, { name, repositoryUrl: repo })).status).toBe(201);
        clock.advance(1000);
      }
      const page1 = await t.call(org, 'GET', `/v1/organizations/${org.orgId}/billing?limit=2`);
      expect(page1.status).toBe(200);
      expect(page1.body.success).toBe(true);
      expect(page1.body.meta).toEqual({ page: 1, limit: 2, total: 3, next: expect.any(String) });
      expect(page1.body.data.balance).toEqual({ amount: '7.00', currency: 'USD' });
      expect(page1.body.data.charges).toHaveLength(2);
      expect(page1.body.data.charges[0]).toEqual({
        id: expect.stringMatching(/^chg_/),
        amount: '1.00',
        currency: 'USD',
        operation: 'POST /api/v1/projects',
        reference: expect.stringMatching(/^prj_/),
        method: 'ledger',
        userId: org.userId,
        createdAt: expect.any(String),
      });
      const page2 = await t.call(org, 'GET', `/v1/organizations/${org.orgId}/billing?limit=2&page=2`);
      expect(page2.body.data.charges).toHaveLength(1);
      const all = [...page1.body.data.charges, ...page2.body.data.charges];
      const created = all.map((c: { createdAt: string }) => c.createdAt);
      expect(created).toEqual([...created].sort().reverse());
      const byName = await t.call(org, 'GET', `/v1/organizations/billing/billing`);
      expect(byName.status).toBe(200);
      expect(byName.body.data.balance.amount).toBe('7.00');
    });

    it('lets any member read, hides the organization from others, and checks the query', async () => {
      const viewer = await t.user('viewer-billing@example.com');
      await addMember(t, alice.orgId, viewer, 'viewer');
      const asViewer = await t.call(viewer, 'GET', `/v1/organizations/${alice.orgId}/billing`);
      expect(asViewer.status).toBe(200);
      expect(asViewer.body.data.balance.amount).toBe(await balance(alice));
      const stranger = await t.call(viewer, 'GET', `/v1/organizations/${bob.orgId}/billing`);
      expect(stranger.status).toBe(404);
      expect(stranger.body.error.code).toBe('NOT_FOUND');
      const anonymous = await t.call(null, 'GET', `/v1/organizations/${alice.orgId}/billing`);
      expect(anonymous.status).toBe(401);
      const bad = await t.call(alice, 'GET', `/v1/organizations/${alice.orgId}/billing?limit=0`);
      expect(bad.status).toBe(400);
      expect(bad.body.error.details).toEqual([{ path: 'limit', message: 'limit must be between 1 and 100' }]);
      const empty = await t.call(bob, 'GET', `/v1/organizations/${bob.orgId}/billing`);
      expect(empty.body.data).toEqual({ balance: { amount: '5.00', currency: 'USD' }, charges: [] });
      expect(empty.body.meta).toEqual({ page: 1, limit: 10, total: 0, next: null });
    });
  });
});
