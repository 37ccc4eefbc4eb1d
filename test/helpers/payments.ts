import {
  formatCredential,
  parsePaymentChallenges,
  type PaymentChallenge,
  type PaymentCredential,
} from '../../api/payment.ts';
import { addCredits } from '../../server/features/billing/credits.ts';
import type { TestApp, TestUser } from './app.ts';

/** Tops up the user's personal organization through the service the CLI uses. */
export const topUp = (t: TestApp, user: TestUser, cents: number) => addCredits(t.deps, user.orgId, cents);

/** Lifts the rate limit for tests that send hundreds of requests with one token. */
export async function unlimited(t: TestApp, user: TestUser): Promise<void> {
  await t.deps.db
    .updateTable('organizations')
    .set({ plan: 'enterprise' })
    .where('id', '=', user.orgId)
    .execute();
}

/** POSTs without a credential and returns the 402's challenge, parsed by the api/ parser. */
export async function challengeFor(
  t: TestApp,
  user: TestUser,
  url: string,
  body: unknown,
): Promise<PaymentChallenge> {
  const res = await t.call(user, 'POST', url, body);
  if (res.status !== 402) throw new Error(`expected 402, got ${res.status}: ${res.text}`);
  const [challenge] = parsePaymentChallenges(String(res.headers['www-authenticate']));
  if (!challenge) throw new Error(`no Payment challenge in ${String(res.headers['www-authenticate'])}`);
  return challenge;
}

/** The `Payment-Authorization` header value for a challenge (ledger: empty payload). */
export const credentialFor = (challenge: PaymentChallenge, overrides: Partial<PaymentCredential> = {}) =>
  formatCredential({ challenge, payload: {}, ...overrides });

/** Gets a challenge, then repeats the request paying it. */
export async function payAndCall(
  t: TestApp,
  user: TestUser,
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const challenge = await challengeFor(t, user, url, body);
  return t.call(user, 'POST', url, body, { 'payment-authorization': credentialFor(challenge), ...headers });
}

/** Every ledger entry of an organization, oldest first. */
export const ledgerOf = (t: TestApp, orgId: string) =>
  t.deps.db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('organization_id', '=', orgId)
    .orderBy('created_at')
    .execute();
