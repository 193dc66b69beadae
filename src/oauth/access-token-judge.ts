/**
 * An external authorization server's access tokens on `/mcp` (SPEC §15): JWTs (RFC 9068) verified
 * by `jose` against the server's JWKS (fetched again on an unknown `kid` at most once a minute),
 * with `iss`, `aud`, `exp` and `nbf` (60 s leeway) checked, an asymmetric algorithm only, then
 * mapped to a caller (judge-caller.ts). Nothing of the token is logged or answered: a refusal
 * says which check failed, by jose's error code.
 *
 * A verified token's claims are kept (by the token's SHA-256, never the token) until it expires or
 * five minutes pass, so a tool call pays one hash rather than one signature check
 * (docs/performance.md). The caller is looked up on every request: a reload of the callers file
 * applies at once.
 */
import { hash } from 'node:crypto'
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose'
import { LRUCache } from 'lru-cache'
import type { Logger } from 'pino'
import { callerOfToken, TOKEN_OUTSIDE_SOURCES, type CallerIndex, type TokenHolder } from '../callers/judge-caller.js'
import type { TokenCallers, TokenVerdict } from '../callers/token-callers.js'
import type { Clock } from '../clock.js'
import type { OAuthConfig } from '../config/oauth-settings.js'
import { CallerNotPermittedError, CallerUnauthenticatedError } from '../errors.js'
import { challengeOf, SCOPE } from './challenge.js'

/** RFC 9068 §4 and SPEC §15: never `none`, never an HMAC, whose key would be a secret the server shares. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
const LEEWAY_S = 60
const REFETCH_AT_MOST_MS = 60_000
const KEPT_AT_MOST_MS = 5 * 60_000
const KEPT_TOKENS = 10_000

interface Verified {
  holder: TokenHolder
  /** The token's own scopes; null when it carries none. */
  scopes: readonly string[] | null
}

export interface AccessTokenJudgeDeps {
  config: OAuthConfig
  jwksUri: URL
  callers: () => CallerIndex
  clock: Clock
  log: Logger
}

export function createAccessTokenJudge (deps: AccessTokenJudgeDeps): TokenCallers {
  const { config, clock, log } = deps
  const keys = createRemoteJWKSet(deps.jwksUri, { cooldownDuration: REFETCH_AT_MOST_MS })
  const kept = new LRUCache<string, Verified>({ max: KEPT_TOKENS })
  const invalid = (reason: string): TokenVerdict => ({
    ok: false,
    error: new CallerUnauthenticatedError(`the access token ${reason}`, challengeOf(config, 'invalid_token')),
  })

  return {
    challenge: challengeOf(config),
    async judge (token, peer) {
      const id = hash('sha256', token)
      let verified = kept.get(id)
      if (verified === undefined) {
        const outcome = await verify(token)
        if (typeof outcome === 'string') return invalid(outcome)
        verified = outcome.verified
        const untilMs = Math.min((outcome.expiresAtS + LEEWAY_S) * 1000 - clock.wallMs(), KEPT_AT_MOST_MS)
        if (untilMs > 0) kept.set(id, verified, { ttl: untilMs })
      }
      if (verified.scopes !== null && !verified.scopes.includes(SCOPE)) {
        return { ok: false, error: new CallerNotPermittedError(`The access token does not carry the ${SCOPE} scope: ask for it when signing in`, challengeOf(config, 'insufficient_scope')) }
      }
      const caller = callerOfToken(deps.callers(), verified.holder, peer)
      if (typeof caller === 'string') {
        log.warn({ subject: verified.holder.subject, clientId: verified.holder.clientId, reason: caller }, 'OAuth access token refused')
        return invalid(caller === TOKEN_OUTSIDE_SOURCES ? `was ${caller}` : 'is valid but no caller is mapped to its subject and client')
      }
      return { ok: true, caller, clientId: verified.holder.clientId }
    },
  }

  async function verify (token: string): Promise<{ verified: Verified, expiresAtS: number } | string> {
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: config.issuer,
        audience: config.audience,
        algorithms: ASYMMETRIC_ALGORITHMS,
        clockTolerance: LEEWAY_S,
        requiredClaims: ['exp'],
        currentDate: new Date(clock.wallMs()),
      })
      return { verified: { holder: holderOf(payload), scopes: scopesOf(payload) }, expiresAtS: payload.exp ?? 0 }
    } catch (err) {
      return refusalOf(err)
    }
  }
}

function holderOf (payload: JWTPayload): TokenHolder {
  const clientId = payload['client_id'] ?? payload['azp']
  return {
    subject: typeof payload.sub === 'string' ? payload.sub : null,
    clientId: typeof clientId === 'string' ? clientId : null,
  }
}

/** `scope` (RFC 9068, a space-separated string), else `scp` (Okta and Entra: a list or a string). */
function scopesOf (payload: JWTPayload): readonly string[] | null {
  const claim = payload['scope'] ?? payload['scp']
  if (typeof claim === 'string') return claim.split(' ').filter((s) => s !== '')
  if (Array.isArray(claim)) return claim.filter((s): s is string => typeof s === 'string')
  return null
}

/** Which check refused the token, in words; the library's own message may quote the token's claims. */
function refusalOf (err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'has expired'
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return 'is not valid yet'
    return err.claim === 'iss' || err.claim === 'aud' ? `was issued by another server or for another resource (${err.claim})` : `lacks a valid ${err.claim} claim`
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return 'is not signed with an asymmetric algorithm'
  if (err instanceof errors.JWKSNoMatchingKey) return 'is signed with a key the authorization server does not publish'
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'has an invalid signature'
  if (err instanceof errors.JWKSTimeout) return 'could not be checked: the authorization server\'s keys did not arrive in time'
  return 'is not a signed JWT'
}
