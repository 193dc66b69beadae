/**
 * The proxy's own errors: a closed list of codes (SPEC §5), one class each, and the single place
 * where a code becomes an HTTP status. Applications tell these apart from the provider's answers by
 * the `x-proxy-error` header, so messages say what to do and never carry addresses or library text.
 */
import type { ProbableDuplicate } from './objects/probable-duplicate.js'

export const ERROR_STATUS = {
  ROUTE_NOT_FOUND: 404,
  ENVIRONMENT_NOT_CONFIGURED: 404,
  INVALID_PATH: 400,
  PATH_NOT_CANONICAL: 400,
  METHOD_NOT_ALLOWED: 405,
  CLIENT_NOT_ALLOWED: 403,
  TOKEN_ENDPOINT_BLOCKED: 403,
  BODY_TOO_LARGE: 413,
  INVALID_HEADERS: 400,
  HEADERS_TOO_LARGE: 431,
  TOKEN_UNAVAILABLE: 503,
  SHUTTING_DOWN: 503,
  UPSTREAM_UNAVAILABLE: 502,
  UPSTREAM_TIMEOUT: 504,
  INTERNAL_ERROR: 500,
  // Requests that never reached a route (SPEC §5, HTTP edges).
  BAD_REQUEST: 400,
  REQUEST_TIMEOUT: 408,
  EXPECTATION_FAILED: 417,
  // Callers (SPEC §7).
  CALLER_UNAUTHENTICATED: 401,
  CALLER_NOT_PERMITTED: 403,
  CALLER_RATE_LIMITED: 429,
  EXTERNAL_REFERENCE_REQUIRED: 400,
  AMOUNT_UNREADABLE: 400,
  AMOUNT_LIMIT_EXCEEDED: 403,
  // Idempotency (SPEC §8) and the shared store (SPEC §9).
  IDEMPOTENCY_IN_PROGRESS: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  STATE_UNAVAILABLE: 503,
  // The webhook inbox (SPEC §10).
  WEBHOOK_SOURCE_NOT_ALLOWED: 403,
  WEBHOOK_SIGNATURE_INVALID: 401,
  WEBHOOK_STORE_UNAVAILABLE: 503,
  // Approvals (SPEC §11).
  APPROVAL_REJECTED: 403,
  APPROVAL_EXPIRED: 403,
  APPROVAL_NOT_FOUND: 404,
  APPROVAL_NOT_PERMITTED: 403,
  APPROVAL_SELF_DECISION: 403,
  APPROVAL_ALREADY_DECIDED: 409,
  // Agents over MCP (SPEC §13): a tool's arguments refused before any request is made.
  MCP_INVALID_ARGUMENTS: 400,
  // Payments followed to their final state (SPEC §12).
  PAYMENT_NOT_FOUND: 404,
  // Payouts that cannot double (SPEC §16).
  PAYMENT_PROBABLE_DUPLICATE: 409,
} as const

export type ProxyErrorCode = keyof typeof ERROR_STATUS

export class ProxyError extends Error {
  readonly code: ProxyErrorCode
  readonly statusCode: number
  /** Seconds a client should wait before trying again, sent as `Retry-After`. */
  readonly retryAfterSeconds: number | undefined

  constructor (code: ProxyErrorCode, message: string, options: { cause?: unknown, retryAfterSeconds?: number } = {}) {
    super(message, { cause: options.cause })
    // Each subclass's own name (TokenUnavailableError, …) in stack traces and logs.
    this.name = new.target.name
    this.code = code
    this.statusCode = ERROR_STATUS[code]
    this.retryAfterSeconds = options.retryAfterSeconds
  }

  toJSON (): { error: { code: ProxyErrorCode, message: string } } {
    return { error: { code: this.code, message: this.message } }
  }
}

export class RouteNotFoundError extends ProxyError {
  constructor () {
    super('ROUTE_NOT_FOUND', 'No route: use /{production|sandbox}/{fiat|crypto}/<path>, /fiat/<path> or /crypto/<path>')
  }
}

export class EnvironmentNotConfiguredError extends ProxyError {
  constructor (message: string) {
    super('ENVIRONMENT_NOT_CONFIGURED', message)
  }
}

export class InvalidPathError extends ProxyError {
  constructor (reason: string) {
    super('INVALID_PATH', `Request path refused: ${reason}`)
  }
}

/** SPEC §3: a segment a lenient provider might read as another (`payouts;x`, `payouts.json`, `sandbox%20`). */
export class PathNotCanonicalError extends ProxyError {
  constructor (reason: string, segment: number) {
    super('PATH_NOT_CANONICAL', `Path segment ${segment} below the route is not canonical: ${reason}; spell the path plainly`)
  }
}

export class MethodNotAllowedError extends ProxyError {
  constructor (method: string) {
    super('METHOD_NOT_ALLOWED', `Method ${method} is not proxied`)
  }
}

export class ClientNotAllowedError extends ProxyError {
  constructor (message: string) {
    super('CLIENT_NOT_ALLOWED', message)
  }
}

export class TokenEndpointBlockedError extends ProxyError {
  constructor () {
    super('TOKEN_ENDPOINT_BLOCKED', 'The token endpoint is reachable only by the proxy itself')
  }
}

export class BodyTooLargeError extends ProxyError {
  constructor (limitBytes: number) {
    super('BODY_TOO_LARGE', `Request body exceeds the limit of ${limitBytes} bytes (PROXY_BODY_LIMIT_BYTES)`)
  }
}

export class InvalidHeadersError extends ProxyError {
  constructor (reason: string) {
    super('INVALID_HEADERS', `Request headers refused: ${reason}`)
  }
}

export class HeadersTooLargeError extends ProxyError {
  constructor (reason: string) {
    super('HEADERS_TOO_LARGE', `Request headers refused: ${reason}`)
  }
}

export class TokenUnavailableError extends ProxyError {
  constructor (environment: string, retryAfterSeconds: number, cause?: unknown) {
    super('TOKEN_UNAVAILABLE', `No valid ${environment} token: the token endpoint is failing; retry shortly`, { cause, retryAfterSeconds })
  }
}

export class ShuttingDownError extends ProxyError {
  constructor () {
    super('SHUTTING_DOWN', 'The proxy is shutting down; retry on another instance', { retryAfterSeconds: 1 })
  }
}

export class UpstreamUnavailableError extends ProxyError {
  constructor (cause?: unknown) {
    super('UPSTREAM_UNAVAILABLE', 'The payments API could not be reached', { cause })
  }
}

export class UpstreamTimeoutError extends ProxyError {
  constructor (cause?: unknown) {
    super('UPSTREAM_TIMEOUT', 'The payments API did not answer in time (PROXY_UPSTREAM_TIMEOUT_SECONDS)', { cause })
  }
}

/** Anything unforeseen: the client learns nothing, the log gets the error. */
export class InternalError extends ProxyError {
  constructor (cause?: unknown) {
    super('INTERNAL_ERROR', 'The proxy failed to handle the request', { cause })
  }
}

export class BadRequestError extends ProxyError {
  constructor (reason: string) {
    super('BAD_REQUEST', `Malformed request: ${reason}`)
  }
}

export class RequestTimeoutError extends ProxyError {
  constructor () {
    super('REQUEST_TIMEOUT', 'The request was not received in time')
  }
}

export class ExpectationFailedError extends ProxyError {
  constructor () {
    super('EXPECTATION_FAILED', 'Only "Expect: 100-continue" is supported')
  }
}

/**
 * `challenge` is the answer's `WWW-Authenticate` when it is not the plain one: SPEC §15's, which
 * points an OAuth client at the protected resource's metadata.
 */
export class CallerUnauthenticatedError extends ProxyError {
  readonly challenge: string | undefined
  constructor (reason: string, challenge?: string) {
    super('CALLER_UNAUTHENTICATED', `Caller not identified: ${reason}`)
    this.challenge = challenge
  }
}

export class CallerNotPermittedError extends ProxyError {
  /** SPEC §15: an access token without the `payments` scope is told so in `WWW-Authenticate`. */
  readonly challenge: string | undefined
  constructor (message: string, challenge?: string) {
    super('CALLER_NOT_PERMITTED', message)
    this.challenge = challenge
  }
}

export class CallerRateLimitedError extends ProxyError {
  constructor (retryAfterSeconds: number) {
    super('CALLER_RATE_LIMITED', 'This caller\'s request rate limit is reached; retry after the time in Retry-After', { retryAfterSeconds })
  }
}

export class ExternalReferenceRequiredError extends ProxyError {
  constructor (message: string) {
    super('EXTERNAL_REFERENCE_REQUIRED', message)
  }
}

export class AmountUnreadableError extends ProxyError {
  constructor (reason: string) {
    super('AMOUNT_UNREADABLE', `Amount or currency cannot be read unambiguously: ${reason}`)
  }
}

export class AmountLimitExceededError extends ProxyError {
  constructor (message: string) {
    super('AMOUNT_LIMIT_EXCEEDED', message)
  }
}

export class IdempotencyInProgressError extends ProxyError {
  constructor () {
    super('IDEMPOTENCY_IN_PROGRESS', 'A request with this externalReference is still in flight; retry shortly', { retryAfterSeconds: 1 })
  }
}

export class IdempotencyKeyReusedError extends ProxyError {
  constructor () {
    super('IDEMPOTENCY_KEY_REUSED', 'This externalReference was already used with a different body; use a new reference for a new transaction')
  }
}

/** The shared store (SPEC §9) cannot be reached: nothing that needs it is forwarded unchecked. */
export class StateUnavailableError extends ProxyError {
  constructor (cause?: unknown) {
    super('STATE_UNAVAILABLE', 'The shared state store is unreachable; retry shortly', { cause, retryAfterSeconds: 1 })
  }
}

export class ApprovalRejectedError extends ProxyError {
  constructor (reason: string | null) {
    super('APPROVAL_REJECTED', reason === null ? 'A person rejected this request; it was not sent' : `A person rejected this request; it was not sent: ${reason}`)
  }
}

/** SPEC §11: silence is never consent. */
export class ApprovalExpiredError extends ProxyError {
  constructor () {
    super('APPROVAL_EXPIRED', 'Nobody decided on this request in time; it was not sent. Send it again with a new reference to ask again')
  }
}

export class ApprovalNotFoundError extends ProxyError {
  constructor () {
    super('APPROVAL_NOT_FOUND', 'No such approval')
  }
}

export class ApprovalNotPermittedError extends ProxyError {
  constructor (callerId: string) {
    super('APPROVAL_NOT_PERMITTED', `Caller ${callerId} may not decide approvals: give it approver: true in the callers file`)
  }
}

export class ApprovalSelfDecisionError extends ProxyError {
  constructor () {
    super('APPROVAL_SELF_DECISION', 'An approver cannot decide its own requests: another person must')
  }
}

export class ApprovalAlreadyDecidedError extends ProxyError {
  constructor (status: string) {
    super('APPROVAL_ALREADY_DECIDED', `This approval is ${status} already; a decision is final`)
  }
}

/** SPEC §13: `/mcp` is stateless, so there is no GET stream to open and no session to DELETE. */
export class McpMethodNotAllowedError extends ProxyError {
  constructor (method: string) {
    super('METHOD_NOT_ALLOWED', `${method} /mcp: this endpoint is stateless Streamable HTTP; send each JSON-RPC message with POST`)
  }
}

/**
 * SPEC §13: arguments that fail the tool's schema, or a placeholder that is not one canonical segment; nothing is sent.
 */
export class McpInvalidArgumentsError extends ProxyError {
  constructor (place: string, problem: string) {
    super('MCP_INVALID_ARGUMENTS', `Invalid arguments: ${place} ${problem}`)
  }
}

/** SPEC §12: another caller's payment is as absent as one that does not exist. */
export class PaymentNotFoundError extends ProxyError {
  constructor () {
    super('PAYMENT_NOT_FOUND', 'No such payment')
  }
}

/** The webhook listener's 404: it names nothing, since it faces the internet (SPEC §10). */
/**
 * SPEC §16: the same payout as an earlier one under another reference, refused with nothing sent and
 * no amount counted. The message is what an agent reads as its tool error: what the earlier payment
 * is, and that a retry must reuse its reference.
 */
export class PaymentProbableDuplicateError extends ProxyError {
  readonly duplicateOf: ProbableDuplicate

  constructor (callerId: string, duplicateOf: ProbableDuplicate) {
    super('PAYMENT_PROBABLE_DUPLICATE', `Caller ${callerId}: probably a duplicate of payment ${duplicateOf.id} (state ${duplicateOf.state}, created at ${new Date(duplicateOf.createdAt * 1000).toISOString()}), the same amount, currency and recipient under another reference; nothing was sent. ` +
      `A retry of that payout must reuse its externalReference ${JSON.stringify(duplicateOf.externalReference)}, which is answered from the earlier payment and never pays twice. ` +
      'If it is truly a new payout, ask a person to send it, or wait until the earlier one has failed')
    this.duplicateOf = duplicateOf
  }

  override toJSON (): { error: { code: ProxyErrorCode, message: string, duplicateOf: ProbableDuplicate } } {
    return { error: { ...super.toJSON().error, duplicateOf: this.duplicateOf } }
  }
}

export class WebhookRouteNotFoundError extends ProxyError {
  constructor () {
    super('ROUTE_NOT_FOUND', 'Not found')
  }
}

export class WebhookBodyTooLargeError extends ProxyError {
  constructor (limitBytes: number) {
    super('BODY_TOO_LARGE', `Webhook body exceeds the limit of ${limitBytes} bytes`)
  }
}

export class WebhookMethodNotAllowedError extends ProxyError {
  constructor () {
    super('METHOD_NOT_ALLOWED', 'Webhooks are delivered with POST')
  }
}

export class WebhookSourceNotAllowedError extends ProxyError {
  constructor () {
    super('WEBHOOK_SOURCE_NOT_ALLOWED', 'This source may not deliver webhooks here')
  }
}

export class WebhookSignatureInvalidError extends ProxyError {
  constructor () {
    super('WEBHOOK_SIGNATURE_INVALID', 'The webhook signature is missing or wrong')
  }
}

/** Never 200 for an event that is not stored: the provider retries after Retry-After. */
export class WebhookStoreUnavailableError extends ProxyError {
  constructor (reason: string, cause?: unknown) {
    super('WEBHOOK_STORE_UNAVAILABLE', `The event could not be stored (${reason}); retry later`, { cause, retryAfterSeconds: 5 })
  }
}

const UPSTREAM_TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT',
  'FST_REPLY_FROM_TIMEOUT', 'FST_REPLY_FROM_GATEWAY_TIMEOUT', 'ETIMEDOUT',
])

/**
 * Maps whatever the HTTP client raised while talking to an upstream onto our two upstream codes.
 * reply-from wraps undici's error, so the undici code is looked for along the `cause` chain.
 */
export function upstreamErrorFrom (err: unknown): ProxyError {
  for (let e: unknown = err, depth = 0; e != null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    // Our own errors raised inside the upstream call (the body limit of request-body.ts) arrive wrapped.
    if (e instanceof ProxyError) return e
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && UPSTREAM_TIMEOUT_CODES.has(code)) return new UpstreamTimeoutError(err)
  }
  return new UpstreamUnavailableError(err)
}
