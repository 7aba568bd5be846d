/** A detail of a validation error: which field, and what is wrong with it. */
export interface ErrorDetail {
  location: string;
  message: string;
}

/** An error answer of the service ({"error": "..."}). */
export class AgentWalletError extends Error {
  override name = 'AgentWalletError';
  constructor(
    message: string,
    /** The HTTP status (0 when no answer came). */
    readonly status: number,
    /** The X-Request-Id of the answer, for support. */
    readonly requestId?: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
  }
}

/** 401: the API key is missing, malformed, unknown or revoked. */
export class AuthenticationError extends AgentWalletError {
  override name = 'AuthenticationError';
}

/** 403 other than a policy block: the key's role or scope may not do this. */
export class PermissionError extends AgentWalletError {
  override name = 'PermissionError';
}

/** 404: no such resource in the reach of this key (another account's ids too). */
export class NotFoundError extends AgentWalletError {
  override name = 'NotFoundError';
}

/** 409: the resource is not in a state that allows this (an approval already decided…). */
export class ConflictError extends AgentWalletError {
  override name = 'ConflictError';
}

/** 400/413/422: the request is malformed or invalid; `field` names the first failing field. */
export class ValidationError extends AgentWalletError {
  override name = 'ValidationError';
  get field(): string | undefined {
    return this.details[0]?.location?.replace(/^(body|query|header)\./, '');
  }
}

/** 429: over the key's requests per minute. */
export class RateLimitError extends AgentWalletError {
  override name = 'RateLimitError';
  constructor(
    message: string,
    status: number,
    requestId: string | undefined,
    /** Seconds to wait before trying again. */
    readonly retryAfter: number,
  ) {
    super(message, status, requestId);
  }
}

/** 502/503 (or no answer): a dependency is down; safe to retry with the same idempotency key. */
export class ServiceUnavailableError extends AgentWalletError {
  override name = 'ServiceUnavailableError';
}

/** A webhook that does not verify: wrong signature, stale timestamp or malformed headers. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** errorFor maps an error answer to its typed error. */
export function errorFor(status: number, body: unknown, headers: Headers): AgentWalletError {
  const b = (body ?? {}) as { error?: string; details?: ErrorDetail[] };
  const message = b.error ?? `HTTP ${status}`;
  const requestId = headers.get('x-request-id') ?? undefined;
  const details = Array.isArray(b.details) ? b.details : [];
  switch (true) {
    case status === 401:
      return new AuthenticationError(message, status, requestId, details);
    case status === 403:
      return new PermissionError(message, status, requestId, details);
    case status === 404:
      return new NotFoundError(message, status, requestId, details);
    case status === 409:
      return new ConflictError(message, status, requestId, details);
    case status === 429:
      return new RateLimitError(message, status, requestId, Number(headers.get('retry-after') ?? 1) || 1);
    case status === 400 || status === 413 || status === 422:
      return new ValidationError(message, status, requestId, details);
    case status === 502 || status === 503:
      return new ServiceUnavailableError(message, status, requestId, details);
  }
  return new AgentWalletError(message, status, requestId, details);
}
