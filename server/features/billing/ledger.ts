import type { Kysely } from 'kysely';
import { newId } from '../../core/ids.ts';
import { isUniqueViolation } from '../../platform/store/errors.ts';
import type { Database } from '../../platform/store/schema.ts';
import { appendEntry, balanceCents, challengeUsed, personalOrganization } from './ledger-store.ts';
import type { PaymentContext, PaymentMethod } from './method.ts';
import { formatCents } from './money.ts';
import { operationName } from './operations.ts';
import { PaymentRefused } from './refusal.ts';

const usedRefusal = () =>
  new PaymentRefused(
    'used',
    'This payment challenge was already used to pay; pay the fresh challenge in WWW-Authenticate',
  );

/**
 * The caller's personal organization, locked until the transaction ends on PostgreSQL, where two
 * transactions could otherwise both see the same balance and both spend it. SQLite runs one
 * write transaction at a time, so its check and insert are already atomic.
 */
async function lockPayer(tx: Kysely<Database>, ctx: PaymentContext) {
  const org = await personalOrganization(tx, ctx.actor.userId);
  if (ctx.deps.store.dialect.name === 'postgres') {
    await tx.selectFrom('organizations').select('id').where('id', '=', org.id).forUpdate().execute();
  }
  return org;
}

/**
 * `ledger`: the caller's personal organization's prepaid balance pays. Balances are topped up
 * with `slipway credits add`; a charge is a negative entry that settles one challenge.
 */
export const ledgerMethod: PaymentMethod = {
  name: 'ledger',

  describe: (price) => ({ amount: String(price.amountCents), currency: price.currency }),

  async verify(ctx) {
    if (Object.keys(ctx.payload).length > 0) {
      throw new PaymentRefused(
        'invalid-payload',
        'The ledger method takes an empty payload: send "payload": {} in the credential',
      );
    }
  },

  async authorize(tx, ctx) {
    const org = await lockPayer(tx, ctx);
    if (await challengeUsed(tx, ctx.challenge.id)) throw usedRefusal();
    const balance = await balanceCents(tx, org.id);
    const price = ctx.operation.price.amountCents;
    if (balance < price) {
      throw new PaymentRefused(
        'insufficient-funds',
        `The balance of organization ${org.name} is ${formatCents(balance)} USD and this operation costs ` +
          `${formatCents(price)} USD; ask the operator to top it up (slipway credits add --org ${org.name} --amount 10.00)`,
      );
    }
  },

  async capture(tx, ctx, reference) {
    const org = await personalOrganization(tx, ctx.actor.userId);
    const chargeId = newId('chg');
    try {
      await appendEntry(tx, {
        id: chargeId,
        organization_id: org.id,
        amount_cents: -ctx.operation.price.amountCents,
        kind: 'charge',
        method: 'ledger',
        reference,
        operation: operationName(ctx.operation),
        challenge_id: ctx.challenge.id,
        user_id: ctx.actor.userId,
        created_at: ctx.deps.clock.now().toISOString(),
      });
    } catch (err) {
      // The unique challenge id is the last word when two requests race with one credential.
      if (isUniqueViolation(err)) throw usedRefusal();
      throw err;
    }
    return { chargeId };
  },
};
