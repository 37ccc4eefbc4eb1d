import type { FastifyReply, FastifyRequest } from 'fastify';
import { formatChallenge, formatReceipt, PAYMENT_RECEIPT } from '../../../api/payment.ts';
import type { PaymentRequiredV1 } from '../../../api/schemas/versioned.ts';
import type { HandlerResult } from '../../platform/http/route-spec.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { issueChallenge } from './challenge.ts';
import type { SettleHook } from '../deployments/index.ts';
import { PAYMENT_METHODS } from './methods.ts';
import type { PaidOperation } from './operations.ts';
import { PaymentRefused } from './refusal.ts';
import { verifyCredential } from './verify-credential.ts';

export interface PaidRequest {
  deps: Deps;
  actor: Actor;
  req: FastifyRequest;
  reply: FastifyReply;
  operation: PaidOperation;
}

/** The protection space of the challenges: the public API host when configured, else the request's. */
function realmOf(deps: Deps, req: FastifyRequest): string {
  return deps.config.publicApiUrl ? new URL(deps.config.publicApiUrl).host : req.host;
}

/** 402 with a fresh challenge for every accepted method; nothing is stored, so nothing needs cleaning up. */
async function sendPaymentRequired(r: PaidRequest, refusal: PaymentRefused): Promise<HandlerResult> {
  const secret = r.deps.paymentKey();
  const now = r.deps.clock.now();
  const realm = realmOf(r.deps, r.req);
  const challenges = PAYMENT_METHODS.map((method) =>
    issueChallenge(secret, now, realm, method, { operation: r.operation, userId: r.actor.userId }),
  );
  r.req.log.info({ reason: refusal.reason }, 'payment required');
  const body: PaymentRequiredV1 = {
    code: 'PAYMENT_REQUIRED',
    message: refusal.message,
    challengeId: challenges[0]!.id,
  };
  await r.reply
    .status(402)
    .header('WWW-Authenticate', challenges.map(formatChallenge).join(', '))
    .header('Cache-Control', 'no-store')
    .send(body);
  return { kind: 'sent' };
}

/**
 * Runs a paid operation: checks the credential (402 with a fresh challenge when there is none
 * or it is refused), then runs `run`, which must hand the settle hook to its service so that the
 * payment and the operation commit in one transaction. Answers 201 with `Payment-Receipt`.
 */
export async function runPaid<T>(
  r: PaidRequest,
  run: (hook: SettleHook) => Promise<T>,
): Promise<HandlerResult> {
  try {
    const header = r.req.headers['payment-authorization'];
    const { method, ctx } = await verifyCredential(
      r.deps,
      r.actor,
      r.operation,
      Array.isArray(header) ? header[0] : header,
    );
    let chargeId: string | undefined;
    const data = await run({
      before: (tx) => method.authorize(tx, ctx),
      after: async (tx, resourceId) => {
        chargeId = (await method.capture(tx, ctx, resourceId)).chargeId;
      },
    });
    // A service that forgot the hook would hand out work for free: fail loudly instead.
    if (!chargeId) throw new Error(`${r.operation.path} did not settle its payment`);
    const receipt = formatReceipt({
      status: 'success',
      method: method.name,
      timestamp: r.deps.clock.now().toISOString(),
      reference: chargeId,
    });
    await r.reply.status(201).header(PAYMENT_RECEIPT, receipt).send(data);
    return { kind: 'sent' };
  } catch (err) {
    if (err instanceof PaymentRefused) return sendPaymentRequired(r, err);
    throw err;
  }
}
