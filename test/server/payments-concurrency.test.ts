import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseReceipt } from '../../api/payment.ts';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.ts';
import { challengeFor, credentialFor, ledgerOf, topUp, unlimited } from '../helpers/payments.ts';

const PROJECTS = '/api/v1/projects';
const repo = 'https://example.com/repo.git';

describe('paid operations under concurrency', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const projectsOf = (user: TestUser) =>
    t.deps.db.selectFrom('projects').select('name').where('organization_id', '=', user.orgId).execute();

  it('takes one payment and runs one operation for 20 concurrent requests presenting one credential', async () => {
    const user = await t.user('racer@example.com');
    await unlimited(t, user);
    await topUp(t, user, 2000);
    const body = { name: 'raced', repositoryUrl: repo };
    const credential = credentialFor(await challengeFor(t, user, PROJECTS, body));
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.call(user, 'POST', PROJECTS, body, { 'payment-authorization': credential }),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 402);
    expect(created).toHaveLength(1);
    expect(refused).toHaveLength(19);
    for (const r of refused) expect(r.body.message).toMatch(/already used/);
    const charges = (await ledgerOf(t, user.orgId)).filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(1);
    expect(charges[0]!.id).toBe(parseReceipt(String(created[0]!.headers['payment-receipt'])).reference);
    expect(await projectsOf(user)).toEqual([{ name: 'raced' }]);
  });

  it('never lets the balance go below zero: 50 concurrent paid requests on 10.00 make exactly 10', async () => {
    const user = await t.user('spender@example.com');
    await unlimited(t, user);
    await topUp(t, user, 1000);
    const bodies = Array.from({ length: 50 }, (_, i) => ({ name: `spend-${i}`, repositoryUrl: repo }));
    const credentials = await Promise.all(
      bodies.map(async (body) => credentialFor(await challengeFor(t, user, PROJECTS, body))),
    );
    const answers = await Promise.all(
      bodies.map((body, i) =>
        t.call(user, 'POST', PROJECTS, body, { 'payment-authorization': credentials[i]! }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(10);
    const refused = answers.filter((a) => a.status === 402);
    expect(refused).toHaveLength(40);
    for (const r of refused) expect(r.body.message).toMatch(/is 0\.00 USD/);
    const entries = await ledgerOf(t, user.orgId);
    expect(entries.reduce((sum, e) => sum + e.amount_cents, 0)).toBe(0);
    expect(entries.filter((e) => e.kind === 'charge')).toHaveLength(10);
    expect(await projectsOf(user)).toHaveLength(10);
    const billing = await t.call(user, 'GET', `/v1/organizations/${user.orgId}/billing`);
    expect(billing.body.data.balance).toEqual({ amount: '0.00', currency: 'USD' });
  });
});
