/**
 * Pure: the headers a proxied request carries upstream, from the client's headers and the token.
 * The client's credentials, cookies and forwarding headers never reach the provider, hop-by-hop
 * headers stay on their hop, and the proxy's own `Authorization` is the only one sent (SPEC §5).
 */
import type { IncomingHttpHeaders } from 'node:http'

/**
 * RFC 9110 §7.6.1 connection-specific fields, plus the legacy ones clients still send
 * (`Keep-Alive`, `Proxy-Connection`) and `Expect`/`HTTP2-Settings`, which undici refuses outright
 * (a 500 with a library message otherwise). Node answers `Expect: 100-continue` itself.
 */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings', 'expect']

/** Credentials and identity the client may try to pass on or forge. */
const CLIENT_CREDENTIALS = ['authorization', 'proxy-authorization', 'cookie']
const FORWARDING = ['forwarded', 'x-real-ip', 'via']

const DROPPED: ReadonlySet<string> = new Set([...HOP_BY_HOP, ...CLIENT_CREDENTIALS, ...FORWARDING])

/** `api-key`, `api_key`, `apikey`, `x-api-key`, `x-api_key`, ... : look-alikes of the provider's key header. */
const API_KEY_LOOKALIKE = /^(?:x-)?api[-_]?key$/

export function isDroppedHeader (name: string): boolean {
  return DROPPED.has(name) || name.startsWith('x-forwarded-') || API_KEY_LOOKALIKE.test(name)
}

/**
 * `headers` are the client's (lower-case names, as Node parses them); reply-from has already set
 * `host` to the upstream's. Returns a new object; the input is not modified.
 */
export function buildUpstreamHeaders (headers: IncomingHttpHeaders, token: string, requestId: string): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {}
  const listed = connectionListed(headers.connection)
  for (const name in headers) {
    if (isDroppedHeader(name) || (listed !== null && listed.has(name))) continue
    out[name] = headers[name]
  }
  out.authorization = `Bearer ${token}`
  out['x-request-id'] = requestId
  return out
}

/** Names listed in `Connection` are hop-by-hop too (RFC 9110 §7.6.1). */
function connectionListed (value: string | undefined): Set<string> | null {
  if (value === undefined || value === '') return null
  return new Set(value.toLowerCase().split(',').map((s) => s.trim()).filter((s) => s !== ''))
}
