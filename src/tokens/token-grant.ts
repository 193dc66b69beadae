/** What the proxy believes about one token, all deadlines on the monotonic clock. */
export interface TokenGrant {
  token: string
  /** The provider's `expiresAt` (Unix seconds), reported by /readyz and `check`. */
  expiresAt: number
  /** Lifetime the proxy believes, after the provider-clock correction and the cap. */
  lifetimeS: number
  /** Monotonic ms when the token request was sent: the conservative origin of every deadline. */
  obtainedAtMs: number
  /** Monotonic ms after which the token must not be sent any more. */
  expiresAtMs: number
}

/** Why a token request failed; a closed list so logs and metrics stay low-cardinality. */
export const TOKEN_FAILURE_REASONS = [
  'timeout', 'network', 'redirect', 'rejected', 'http_status', 'too_large', 'not_json',
  'success_false', 'bad_token', 'bad_expires_at', 'expires_at_in_milliseconds', 'expired',
] as const
export type TokenFailureReason = typeof TOKEN_FAILURE_REASONS[number]

export class TokenRequestError extends Error {
  readonly reason: TokenFailureReason
  /** Safe facts about the response (status, content type, length), never its body. */
  readonly details: Readonly<Record<string, string | number | undefined>>
  constructor (
    reason: TokenFailureReason,
    message: string,
    details: Record<string, string | number | undefined> = {},
    cause?: unknown,
  ) {
    super(message, { cause })
    this.name = 'TokenRequestError'
    this.reason = reason
    this.details = details
  }
}
