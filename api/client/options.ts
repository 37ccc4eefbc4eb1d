import type { PaymentRequiredHandler } from './payment.ts';

/** A `fetch` compatible with the global one; tests and proxies inject their own. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** How `createClient` is configured. */
export interface ClientOptions {
  /** Root of the service, e.g. `http://localhost:3000`; a trailing `/v1` is accepted and ignored. */
  baseUrl: string;
  /** API token (`slw_...`), sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike;
  /** `User-Agent` of every request; default `slipway-client/<version>`. */
  userAgent?: string;
  /** Retries after the first attempt for 429, 502, 503, 504 and network errors; default 4 (5 attempts). */
  retries?: number;
  /** Waits between attempts; injectable so tests need not wait. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Source of jitter in [0, 1); default `Math.random`. */
  random?: () => number;
  /** First backoff delay in milliseconds; doubles on each retry. Default 500. */
  baseDelayMs?: number;
  /** Cap of one backoff delay in milliseconds. Default 30 000. */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the 429 is thrown at once. Default 60 000. */
  maxRetryAfterMs?: number;
  /** Per-attempt time limit in milliseconds (until the body is read; for log streams, until headers). Default 30 000. */
  timeoutMs?: number;
  /** Extra headers sent on every request. */
  headers?: Record<string, string>;
  /**
   * How messages name the setting that holds `baseUrl`, so a user knows what to change: the
   * CLI's `--api-url`, the Action's `api-url` input. Default `baseUrl`.
   */
  baseUrlName?: string;
  /**
   * Until the service has answered once, network failures (refused, no answer) are retried only
   * within this many milliseconds of the call's first attempt, each attempt and wait cut to fit;
   * then the call fails. A command line waiting for its first answer says "cannot reach" at once
   * instead of after every retry. Default: no such limit.
   */
  unreachableAfterMs?: number;
  /** Called on `402 Payment Required` (paid `/api/v1` operations); see payment.ts. */
  onPaymentRequired?: PaymentRequiredHandler;
}
