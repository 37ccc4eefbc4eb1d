import { z } from 'zod';
import { ApiError, ERROR_STATUS, type ErrorCode } from '../errors.ts';
import { ErrorEnvelope } from '../schemas/common.ts';

/** The `/api/v1` error body: `{ code, message }` without the envelope. */
const BareError = z.object({ code: z.string().min(1), message: z.string(), details: z.unknown().optional() });

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  ...Object.fromEntries(Object.entries(ERROR_STATUS).map(([code, status]) => [status, code as ErrorCode])),
  // The service answers 413 for an oversize body as a VALIDATION_ERROR; a proxy may say it in HTML.
  413: 'VALIDATION_ERROR',
  502: 'SERVICE_UNAVAILABLE',
  504: 'SERVICE_UNAVAILABLE',
};

/** The contract's code for a status, for error bodies that carry none (a proxy's HTML page). */
export const codeForStatus = (status: number): ErrorCode => CODE_BY_STATUS[status] ?? 'INTERNAL_ERROR';

/**
 * Where the service is, as the caller's user knows it: its root URL, and the name of the setting
 * that holds it (the CLI's `--api-url`, the Action's `api-url` input; `baseUrl` by default).
 */
export interface ServiceAddress {
  url: string;
  setting: string;
}

const HINTS: Partial<Record<ErrorCode, (at: ServiceAddress) => string>> = {
  SERVICE_UNAVAILABLE: () => 'The service or a proxy in front of it is unavailable; try again in a moment.',
  NOT_FOUND: (at) =>
    `Check ${at.setting} (${at.url}): it should be the root of a Slipway service, such as http://localhost:3000.`,
  UNAUTHORIZED: () => 'Check the API token.',
};

const DEFAULT_ADDRESS: ServiceAddress = { url: 'the service', setting: 'baseUrl' };

/** A short, readable excerpt of a non-JSON body: tags dropped, whitespace collapsed. */
function excerpt(text: string): string {
  const plain = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return plain.length > 200 ? `${plain.slice(0, 200)}...` : plain;
}

/**
 * Builds the ApiError for a failed response from its body: the reference envelope
 * `{ success: false, error }`, the bare `{ code, message }` of `/api/v1`, or anything else
 * (an HTML error page from a proxy), which gets the contract's code for its status.
 */
export function errorFromBody(
  status: number,
  statusText: string,
  contentType: string | null,
  text: string,
  what: string,
  at: ServiceAddress = DEFAULT_ADDRESS,
): ApiError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const enveloped = ErrorEnvelope.safeParse(json);
  if (enveloped.success) {
    const { code, message, details } = enveloped.data.error;
    return new ApiError(code, message, details, status);
  }
  const bare = BareError.safeParse(json);
  if (bare.success) return new ApiError(bare.data.code, bare.data.message, bare.data.details, status);

  const code = codeForStatus(status);
  const seen = excerpt(text);
  const body = seen ? `: "${seen}"` : ' and an empty body';
  const hint = HINTS[code] ? ` ${HINTS[code](at)}` : '';
  return new ApiError(
    code,
    `${what} answered HTTP ${status}${statusText ? ` ${statusText}` : ''} with ${contentType ?? 'no content type'} instead of a Slipway error${body}.${hint}`,
    undefined,
    status,
  );
}

/** A network failure (refused, reset, timed out) after the last attempt, as an ApiError. */
export function networkError(
  what: string,
  cause: unknown,
  attempts: number,
  at: ServiceAddress = DEFAULT_ADDRESS,
): ApiError {
  const reason = describeCause(cause);
  const where = at === DEFAULT_ADDRESS ? 'the service' : `the service at ${at.url}`;
  const err = new ApiError(
    'SERVICE_UNAVAILABLE',
    `${what} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${reason}. Check that ${where} is running, or change ${at.setting}.`,
    undefined,
    503,
  );
  err.cause = cause;
  return err;
}

/** undici hides the useful part (ECONNREFUSED ...) in `cause`. */
function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = cause.cause instanceof Error ? cause.cause.message : undefined;
    return inner && inner !== cause.message ? `${cause.message} (${inner})` : cause.message;
  }
  return String(cause);
}

/** A success answer that does not match the contract: most likely a server of another version. */
export function invalidResponse(what: string, status: number, error: z.ZodError): ApiError {
  const details = error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  const summary = details
    .slice(0, 5)
    .map((d) => (d.path ? `${d.path}: ${d.message}` : d.message))
    .join('; ');
  return new ApiError(
    'INTERNAL_ERROR',
    `${what} answered HTTP ${status} with a body this client does not understand (${summary}). The server may run another version of the API.`,
    details,
  );
}
