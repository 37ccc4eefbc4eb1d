import { z } from 'zod';

/**
 * The Machine Payments Protocol's `Payment` HTTP authentication scheme (IETF draft
 * `draft-ryan-httpauth-payment`), shared by the server and the client: the challenge travels in
 * `WWW-Authenticate` auth-params, the credential and the receipt are base64url JSON without
 * padding. Nothing here knows a payment method; methods only add to `request` and `payload`.
 */

/** The header a client answers a challenge with (`Authorization` already carries the bearer token). */
export const PAYMENT_AUTHORIZATION = 'Payment-Authorization';
/** The header of a successful paid response. */
export const PAYMENT_RECEIPT = 'Payment-Receipt';
/** The authentication scheme's name, as it appears in the headers. */
export const PAYMENT_SCHEME = 'Payment';

/** A header value that cannot be read as the scheme says. */
export class PaymentFormatError extends Error {
  override name = 'PaymentFormatError';
}

/** base64url (RFC 4648 §5) of the UTF-8 JSON of `value`, without padding. */
export function encodeJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** Reads what `encodeJson` wrote; anything that is not base64url JSON throws PaymentFormatError. */
export function decodeJson(text: string): unknown {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new PaymentFormatError('is not base64url without padding');
  try {
    return JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new PaymentFormatError('is not base64url-encoded JSON');
  }
}

/** The auth-params of one `Payment` challenge. */
export const PaymentChallenge = z.object({
  /** Identifies the challenge; the server binds it to the other parameters (an HMAC here). */
  id: z.string().min(1),
  /** Protection space: the API's host. */
  realm: z.string(),
  /** Payment method identifier, e.g. `ledger` (lowercase). */
  method: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'must be a lowercase payment method identifier'),
  /** What kind of payment: `charge` (a one-time payment). */
  intent: z.string().min(1),
  /** base64url JSON of the method's request, e.g. `{"amount":"100","currency":"usd"}`. */
  request: z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be base64url without padding'),
  /** RFC 3339 instant after which the challenge is refused. */
  expires: z.string().optional(),
  /** Human-readable words about what is paid for. */
  description: z.string().optional(),
  /** base64url JSON the server wants echoed back unchanged. */
  opaque: z.string().optional(),
});
export type PaymentChallenge = z.infer<typeof PaymentChallenge>;

/** The decoded `request` of a `charge`: the amount in base units (cents for `usd`) as a decimal string. */
export const ChargeRequest = z.looseObject({
  /** Amount in the currency's smallest unit, as a string of digits: `"100"` is 1.00 USD. */
  amount: z.string().regex(/^(0|[1-9][0-9]*)$/, 'must be a whole number of base units'),
  /** ISO 4217 code in lowercase, e.g. `usd`. */
  currency: z.string().regex(/^[a-z]{3}$/, 'must be a lowercase ISO 4217 code'),
});
export type ChargeRequest = z.infer<typeof ChargeRequest>;

/** What the client sends back: the challenge it answers, echoed, and the method's proof of payment. */
export const PaymentCredential = z.object({
  /** The challenge's parameters, exactly as received. */
  challenge: PaymentChallenge,
  /** Method-specific proof; `ledger` takes an empty object. */
  payload: z.record(z.string(), z.unknown()),
  /** Who pays, when the method needs to say (optional). */
  source: z.string().optional(),
});
export type PaymentCredential = z.infer<typeof PaymentCredential>;

/** What a successful paid response carries in `Payment-Receipt`. */
export const PaymentReceipt = z.object({
  /** Always `success`: a failed payment is a 402, not a receipt. */
  status: z.literal('success'),
  /** The method that paid, e.g. `ledger`. */
  method: z.string(),
  /** When the payment was taken (RFC 3339). */
  timestamp: z.string(),
  /** The payment's reference: a `chg_` id for `ledger`. */
  reference: z.string(),
});
export type PaymentReceipt = z.infer<typeof PaymentReceipt>;

/** The request parameter of a challenge, from the method's request object. */
export const encodeChargeRequest = (request: ChargeRequest): string => encodeJson(request);

/** The decoded and checked `request` of a challenge; throws PaymentFormatError. */
export function decodeChargeRequest(challenge: Pick<PaymentChallenge, 'request'>): ChargeRequest {
  const parsed = ChargeRequest.safeParse(decodeJson(challenge.request));
  if (!parsed.success) throw new PaymentFormatError(`request: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;
const TOKEN68 = /^[A-Za-z0-9._~+/-]+=*/;
const PARAM_ORDER = [
  'id',
  'realm',
  'method',
  'intent',
  'request',
  'expires',
  'description',
  'opaque',
] as const;

/** A quoted-string (RFC 9110 §5.6.4): backslash escapes `"` and `\`. */
const quote = (value: string) => `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;

/** `Payment id="...", realm="...", ...`: one challenge of a `WWW-Authenticate` header. */
export function formatChallenge(challenge: PaymentChallenge): string {
  const params = PARAM_ORDER.filter((name) => challenge[name] !== undefined).map(
    (name) => `${name}=${quote(challenge[name]!)}`,
  );
  return `${PAYMENT_SCHEME} ${params.join(', ')}`;
}

/** One challenge of any scheme, as RFC 9110 §11.6.1 writes them; names are lowercase. */
export interface AuthChallenge {
  scheme: string;
  params: Record<string, string>;
  token68?: string;
}

/**
 * Splits a `WWW-Authenticate` value into its challenges. A header may hold several, of several
 * schemes, separated by the same commas that separate parameters: a token followed by `=` is a
 * parameter, any other token starts a new challenge.
 */
export function parseAuthChallenges(header: string): AuthChallenge[] {
  const out: AuthChallenge[] = [];
  let current: AuthChallenge | undefined;
  let i = 0;
  const skip = (chars: RegExp) => {
    while (i < header.length && chars.test(header[i]!)) i++;
  };
  while (i < header.length) {
    skip(/[\s,]/);
    if (i >= header.length) break;
    const token = TOKEN.exec(header.slice(i))?.[0];
    if (!token) throw new PaymentFormatError(`unexpected "${header[i]}" at position ${i}`);
    i += token.length;
    const afterToken = i;
    skip(/[ \t]/);
    if (current && header[i] === '=') {
      i++;
      skip(/[ \t]/);
      current.params[token.toLowerCase()] = readValue();
      continue;
    }
    i = afterToken;
    current = { scheme: token, params: {} };
    out.push(current);
    skip(/[ \t]/);
    // `Basic dXNlcg==`: a token68 stands alone, up to a comma or the end.
    const t68 = TOKEN68.exec(header.slice(i))?.[0];
    if (t68) {
      const rest = header.slice(i + t68.length);
      if (/^[ \t]*(,|$)/.test(rest) && !/^[ \t]*=/.test(rest)) {
        current.token68 = t68;
        i += t68.length;
      }
    }
  }
  return out;

  function readValue(): string {
    if (header[i] !== '"') {
      const token = TOKEN.exec(header.slice(i))?.[0];
      if (!token) throw new PaymentFormatError(`expected a value at position ${i}`);
      i += token.length;
      return token;
    }
    let value = '';
    for (i++; i < header.length; i++) {
      const c = header[i]!;
      if (c === '"') {
        i++;
        return value;
      }
      if (c === '\\') i++;
      value += header[i] ?? '';
    }
    throw new PaymentFormatError('unterminated quoted string');
  }
}

/** Every well-formed `Payment` challenge of a `WWW-Authenticate` value; other schemes are skipped. */
export function parsePaymentChallenges(header: string): PaymentChallenge[] {
  return parseAuthChallenges(header)
    .filter((c) => c.scheme.toLowerCase() === PAYMENT_SCHEME.toLowerCase())
    .map((c) => PaymentChallenge.safeParse(c.params))
    .flatMap((r) => (r.success ? [r.data] : []));
}

/** `Payment <base64url JSON>`: the value of `Payment-Authorization`. */
export function formatCredential(credential: PaymentCredential): string {
  return `${PAYMENT_SCHEME} ${encodeJson(credential)}`;
}

/** Reads a `Payment-Authorization` value; throws PaymentFormatError saying what is wrong. */
export function parseCredential(header: string): PaymentCredential {
  const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(header);
  if (!match || match[1]!.toLowerCase() !== PAYMENT_SCHEME.toLowerCase()) {
    throw new PaymentFormatError('must be "Payment <base64url JSON>"');
  }
  const parsed = PaymentCredential.safeParse(decodeJson(match[2]!));
  if (!parsed.success) throw new PaymentFormatError(describeIssues(parsed.error));
  return parsed.data;
}

/** The value of `Payment-Receipt`. */
export const formatReceipt = (receipt: PaymentReceipt): string => encodeJson(receipt);

/** Reads a `Payment-Receipt` value; throws PaymentFormatError. */
export function parseReceipt(header: string): PaymentReceipt {
  const parsed = PaymentReceipt.safeParse(decodeJson(header.trim()));
  if (!parsed.success) throw new PaymentFormatError(describeIssues(parsed.error));
  return parsed.data;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ');
}
