import { versioned } from '../../../api/routes/versioned.ts';

/** A price in the currency's smallest unit. */
export interface Price {
  /** Integer cents. */
  amountCents: number;
  /** Lowercase ISO 4217 code, as the challenge's request writes it. */
  currency: 'usd';
}

/** One paid operation: what a challenge is bound to, besides the caller. */
export interface PaidOperation {
  method: 'POST';
  /** The route's path, e.g. `/api/v1/projects`. */
  path: string;
  price: Price;
}

/** The seed's charge: 1.00 USD per call, intent `charge`. */
const ONE_DOLLAR: Price = { amountCents: 100, currency: 'usd' };

/** Every paid operation; a challenge of one is refused by the others ("wrong operation"). */
export const PAID_OPERATIONS = {
  createProject: { method: 'POST', path: versioned.createProject.url, price: ONE_DOLLAR },
  createDeployment: { method: 'POST', path: versioned.createDeployment.url, price: ONE_DOLLAR },
} as const satisfies Record<string, PaidOperation>;

/** `POST /api/v1/projects`: how an operation is named in messages and in the ledger. */
export const operationName = (op: PaidOperation) => `${op.method} ${op.path}`;
