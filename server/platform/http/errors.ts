import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../api/errors.ts';

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown (the server is restarting, or our backend was terminated)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up)
  '53300', // too_many_connections
  '08000', // connection_exception
  '08001', // unable to establish a connection
  '08003', // connection_does_not_exist
  '08004', // server rejected the connection
  '08006', // connection_failure
  'SQLITE_BUSY',
]);

/**
 * node-postgres reports a dropped connection and a full pool's wait running out as plain Errors
 * without a code; only the message tells them apart from a bug. A server restarting can also
 * reset a connection mid-read (`read ECONNRESET`), and a job keeps only the message.
 */
const UNAVAILABLE_MESSAGES =
  /read ECONNRESET|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|the database system is (starting up|shutting down)|terminating connection due to administrator command/i;

/** True for an error that means "the database cannot be reached right now", not a bug. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)) return true;
  // A host with several addresses fails with an AggregateError of the per-address errors.
  return Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner));
}

/** Turns anything thrown into the ApiError the client sees; `tooLarge` is the route's own 413 message. */
export function toApiError(err: unknown, tooLarge?: string): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as Partial<FastifyError> & { code?: string; message?: string };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new ApiError(
      'VALIDATION_ERROR',
      tooLarge ?? 'Request body is larger than this operation takes (1 MiB; 32 MiB to create a deployment)',
      undefined,
      413,
    );
  }
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new ApiError(
      'VALIDATION_ERROR',
      "Send the request body as application/json (a file's bytes as application/octet-stream)",
    );
  }
  if (e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (err instanceof SyntaxError && e.statusCode === 400)) {
    return new ApiError('VALIDATION_ERROR', `Request body is not valid JSON: ${e.message ?? ''}`);
  }
  if (e.statusCode === 400 && e.code?.startsWith('FST_')) {
    return new ApiError('VALIDATION_ERROR', e.message ?? 'Bad request');
  }
  if (isDatabaseUnavailable(err)) {
    return new ApiError('SERVICE_UNAVAILABLE', 'The database is unreachable; retry shortly');
  }
  return new ApiError('INTERNAL_ERROR', 'Internal server error');
}

/** The reference interface wraps errors in the envelope; `/api/v1` answers `{ code, message }`. */
export function sendError(req: FastifyRequest, reply: FastifyReply, err: unknown) {
  const apiError = toApiError(
    err,
    (req.routeOptions?.config as { bodyTooLarge?: string } | undefined)?.bodyTooLarge,
  );
  if (apiError.code === 'INTERNAL_ERROR') req.log.error({ err }, 'unhandled error');
  if (apiError.code === 'SERVICE_UNAVAILABLE') void reply.header('Retry-After', '5');
  void reply.status(apiError.status);
  if (req.url.startsWith('/api/')) {
    return reply.send({ code: apiError.code, message: apiError.message });
  }
  return reply.send({
    success: false,
    error: {
      code: apiError.code,
      message: apiError.message,
      ...(apiError.details === undefined ? {} : { details: apiError.details }),
    },
  });
}
