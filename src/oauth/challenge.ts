/**
 * SPEC §15's `WWW-Authenticate`: where an OAuth client finds the protected resource's metadata
 * (RFC 9728 §5.1), the scope to ask for, and with a token, what was wrong with it (RFC 6750 §3).
 */
import type { OAuthConfig } from '../config/oauth-settings.js'

export const SCOPE = 'payments'

export function challengeOf (config: Pick<OAuthConfig, 'resourceMetadataUrl'>, error?: 'invalid_token' | 'insufficient_scope'): string {
  const base = `Bearer resource_metadata="${config.resourceMetadataUrl}", scope="${SCOPE}"`
  return error === undefined ? base : `${base}, error="${error}"`
}
