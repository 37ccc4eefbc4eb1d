/** Every error code of the wire contract, with the HTTP status it travels with. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  PAYMENT_REQUIRED: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  /** Extension: the organization's plan keeps no more (stored uploads); see docs/api/uploads.md. */
  QUOTA_EXCEEDED: 413,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
/** A known code, or another one a newer server sent. */
export type AnyErrorCode = ErrorCode | (string & {});

/** One problem with one field of a request: `path` is dotted (`variables.2.key`). */
export interface FieldIssue {
  path: string;
  message: string;
}

/** The one error type on both sides of the wire. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: AnyErrorCode;
  readonly details: unknown;

  constructor(code: AnyErrorCode, message: string, details?: unknown, status?: number) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = status ?? (ERROR_STATUS as Record<string, number>)[code] ?? 500;
    this.details = details;
  }

  static validation(details: FieldIssue[], message?: string): ApiError {
    const summary = details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ');
    return new ApiError('VALIDATION_ERROR', message ?? `Invalid request: ${summary}`, details);
  }

  static notFound(what: string): ApiError {
    return new ApiError('NOT_FOUND', `${what} not found`);
  }

  static conflict(message: string): ApiError {
    return new ApiError('CONFLICT', message);
  }

  static forbidden(message: string): ApiError {
    return new ApiError('FORBIDDEN', message);
  }
}
