import { randomUUID } from 'node:crypto';
import { ApiError } from '../errors.ts';
import { errorFromBody, networkError, type ServiceAddress } from './errors.ts';
import type { ClientOptions, FetchLike } from './options.ts';
import { MAX_PAYMENT_ATTEMPTS } from './payment.ts';
import { readRateLimit, type RateLimit } from './rate-limit.ts';
import { backoffDelay, defaultSleep, isRetryableStatus, mayRepeat, parseRetryAfter } from './retry.ts';

/** Version of this client, sent in the default User-Agent. */
export const CLIENT_VERSION = '0.1.0';

/** A query-string value; `undefined` and `null` leave the parameter out. */
export type QueryValue = string | number | boolean | undefined | null;

/** Per-call options every client method accepts. */
export interface CallOptions {
  /** Idempotency-Key of a POST: default a random UUID per call, reused on its retries. `false` sends none (and disables retries). */
  idempotencyKey?: string | false;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
  /** Cancels the call, including any wait between retries. */
  signal?: AbortSignal;
}

/** Options of one request: `CallOptions` plus what to send. */
export interface RequestOptions extends CallOptions {
  /** Query parameters; `undefined` and `null` are left out. */
  query?: object;
  /** JSON body. */
  body?: unknown;
  /** Raw bytes instead, sent as `application/octet-stream` (file uploads). */
  bytes?: Uint8Array;
  /** `Accept` header; default `application/json`. */
  accept?: string;
}

/** What one exchange produced: the status and headers of the final response and what `read` made of it. */
export interface Exchanged<T> {
  status: number;
  headers: Headers;
  value: T;
}

/** Reads a successful response; may throw an ApiError (never retried). */
export type ReadBody<T> = (res: Response, what: string) => Promise<T>;

export interface Http {
  /** Sends one logical request with retries; throws ApiError for any error answer. */
  exchange<T>(method: string, path: string, opts: RequestOptions, read: ReadBody<T>): Promise<Exchanged<T>>;
  /** Like exchange, but hands back the open Response (for streams): the time limit stops at the headers. */
  open(method: string, path: string, opts: RequestOptions): Promise<Response>;
  /** Rate-limit headers of the last response that carried them. */
  readonly rateLimit: RateLimit | null;
  /** Options after defaults, for helpers that retry on their own (log streams). */
  readonly settings: Settings;
  /** The service's URL and the name of its setting, for messages. */
  readonly address: ServiceAddress;
}

export interface Settings {
  retries: number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  baseDelayMs: number;
  maxDelayMs: number;
}

class TimeoutError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/** The service root: trailing slashes and a trailing `/v1` removed, since paths carry their version. */
export function normaliseBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  return url
    .toString()
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '')
    .replace(/\/v1$/, '');
}

function buildUrl(root: string, path: string, query: object | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {}) as [string, QueryValue][]) {
    if (v !== undefined && v !== null) params.append(k, String(v));
  }
  const qs = params.toString();
  return `${root}${path.startsWith('/') ? path : `/${path}`}${qs ? `?${qs}` : ''}`;
}

export function createHttp(options: ClientOptions): Http {
  const root = normaliseBaseUrl(options.baseUrl);
  const fetchImpl: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const settings: Settings = {
    retries: Math.max(0, options.retries ?? 4),
    sleep: options.sleep ?? defaultSleep,
    random: options.random ?? Math.random,
    baseDelayMs: options.baseDelayMs ?? 500,
    maxDelayMs: options.maxDelayMs ?? 30_000,
  };
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const userAgent = options.userAgent ?? `slipway-client/${CLIENT_VERSION}`;
  const address: ServiceAddress = { url: root, setting: options.baseUrlName ?? 'baseUrl' };
  let rateLimit: RateLimit | null = null;
  /** Whether the service has answered this client once (then unreachableAfterMs no longer applies). */
  let answered = false;

  function headersFor(opts: RequestOptions, key: string | undefined, extra: Record<string, string>) {
    const h = new Headers();
    h.set('accept', opts.accept ?? 'application/json');
    h.set('user-agent', userAgent);
    if (options.token) h.set('authorization', `Bearer ${options.token}`);
    // Fastify rejects an empty body declared as JSON, so the type goes only with a body.
    if (opts.body !== undefined) h.set('content-type', 'application/json');
    else if (opts.bytes !== undefined) h.set('content-type', 'application/octet-stream');
    for (const [k, v] of Object.entries(options.headers ?? {})) h.set(k, v);
    for (const [k, v] of Object.entries(opts.headers ?? {})) h.set(k, v);
    if (key !== undefined) h.set('idempotency-key', key);
    for (const [k, v] of Object.entries(extra)) h.set(k, v);
    return h;
  }

  function idempotencyKeyOf(method: string, opts: RequestOptions): string | undefined {
    if (opts.idempotencyKey === false) return undefined;
    if (typeof opts.idempotencyKey === 'string') return opts.idempotencyKey;
    const given = Object.entries(opts.headers ?? {}).find(([k]) => k.toLowerCase() === 'idempotency-key');
    if (given) return given[1];
    // One key per logical call, created before the first attempt, so every retry carries the same one.
    return method.toUpperCase() === 'POST' ? randomUUID() : undefined;
  }

  async function run<T>(
    method: string,
    path: string,
    opts: RequestOptions,
    read: ReadBody<T>,
    streaming: boolean,
  ): Promise<Exchanged<T>> {
    const verb = method.toUpperCase();
    const url = buildUrl(root, path, opts.query);
    const what = `${verb} ${path}`;
    const key = idempotencyKeyOf(verb, opts);
    const repeatable = mayRepeat(verb, key);
    let paymentHeaders: Record<string, string> = {};
    let payments = 0;
    const backoff = (attempt: number) =>
      settings.sleep(
        backoffDelay(attempt, settings.baseDelayMs, settings.maxDelayMs, settings.random),
        opts.signal,
      );

    const started = Date.now();
    /** What is left of unreachableAfterMs for this call, while the service has never answered. */
    const budget = () =>
      answered || options.unreachableAfterMs === undefined
        ? Infinity
        : options.unreachableAfterMs - (Date.now() - started);

    for (let attempt = 1; ; attempt++) {
      const canRetry = repeatable && attempt <= settings.retries;
      if (opts.signal?.aborted) throw opts.signal.reason;
      const controller = new AbortController();
      const onAbort = () => controller.abort(opts.signal?.reason);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const perAttempt = timeoutMs > 0 ? timeoutMs : Infinity;
      const left = budget();
      const limit = Math.max(1, Math.min(perAttempt, left));
      // A wait cut short by the call's budget is reported as the whole budget: the time since the
      // call began, not this attempt's remainder (which is a millisecond less on a busy machine).
      const reported = left < perAttempt ? options.unreachableAfterMs! : limit;
      const timer = Number.isFinite(limit)
        ? setTimeout(() => controller.abort(new TimeoutError(Math.round(reported))), limit)
        : undefined;
      const done = () => {
        clearTimeout(timer);
        // A stream keeps listening: aborting the caller's signal must still close it.
        if (!streaming) opts.signal?.removeEventListener('abort', onAbort);
      };
      let outcome: Outcome<T>;
      try {
        outcome = await attemptOnce({
          verb,
          url,
          what,
          opts,
          key,
          paymentHeaders,
          signal: controller.signal,
          read,
          onHeaders: () => {
            if (streaming) clearTimeout(timer);
          },
        });
      } catch (err) {
        done();
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (!(err instanceof NetworkFailure)) throw err;
        const wait = backoffDelay(attempt, settings.baseDelayMs, settings.maxDelayMs, settings.random);
        if (!canRetry || wait >= budget()) throw networkError(what, err.cause, attempt, address);
        await settings.sleep(wait, opts.signal);
        continue;
      }
      done();
      if (outcome.kind === 'ok') return outcome.result;
      const { res, text } = outcome;
      if (res.status === 402 && options.onPaymentRequired && payments < MAX_PAYMENT_ATTEMPTS) {
        const extra = await options.onPaymentRequired({
          method: verb,
          path,
          wwwAuthenticate: res.headers.get('www-authenticate'),
          body: safeJson(text),
          attempt: payments,
        });
        if (extra) {
          paymentHeaders = extra;
          payments++;
          // Paying is not a failure: it does not use up one of the retries.
          attempt--;
          continue;
        }
      }
      if (isRetryableStatus(res.status) && canRetry) {
        const retryAfter =
          res.status === 429 || res.status === 503 ? parseRetryAfter(res.headers.get('retry-after')) : null;
        if (retryAfter === null) {
          await backoff(attempt);
          continue;
        }
        // A wait longer than the caller accepts (an exhausted hourly quota) is better reported now.
        if (retryAfter <= maxRetryAfterMs) {
          await settings.sleep(retryAfter, opts.signal);
          continue;
        }
      }
      throw errorFromBody(res.status, res.statusText, res.headers.get('content-type'), text, what, address);
    }
  }

  /** One attempt: a success read by `read`, or an error answer with its body as text. */
  async function attemptOnce<T>({
    verb,
    url,
    what,
    opts,
    key,
    paymentHeaders,
    signal,
    read,
    onHeaders,
  }: Attempt<T>): Promise<Outcome<T>> {
    const res = await network(
      fetchImpl(url, {
        method: verb,
        headers: headersFor(opts, key, paymentHeaders),
        body: opts.body !== undefined ? JSON.stringify(opts.body) : opts.bytes,
        signal,
      }),
    );
    answered = true;
    rateLimit = readRateLimit(res.headers) ?? rateLimit;
    if (res.ok) {
      onHeaders();
      const value = await network(read(res, what));
      return { kind: 'ok', result: { status: res.status, headers: res.headers, value } };
    }
    return { kind: 'error', res, text: await network(res.text()) };
  }

  return {
    exchange: (method, path, opts, read) => run(method, path, opts, read, false),
    async open(method, path, opts) {
      const { value } = await run(method, path, opts, async (res) => res, true);
      return value;
    },
    address,
    get rateLimit() {
      return rateLimit;
    },
    settings,
  };
}

interface Attempt<T> {
  verb: string;
  url: string;
  what: string;
  opts: RequestOptions;
  key: string | undefined;
  paymentHeaders: Record<string, string>;
  signal: AbortSignal;
  read: ReadBody<T>;
  /** Called once a success's headers are in (streams stop their time limit there). */
  onHeaders: () => void;
}

type Outcome<T> = { kind: 'ok'; result: Exchanged<T> } | { kind: 'error'; res: Response; text: string };

/** Marks a failure of the transport (refused, reset, timed out), which may be retried. */
class NetworkFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('network failure');
  }
}

/** Awaits `p`, turning transport failures into NetworkFailure; ApiErrors pass through. */
async function network<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new NetworkFailure(err);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
