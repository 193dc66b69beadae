/**
 * Pure: which headers cross the proxy, in both directions. Upstream, the client's credentials,
 * cookies, forwarding and identity headers and anything that could make the provider act on another
 * path or method never arrive, hop-by-hop headers stay on their hop, and the proxy's own
 * `Authorization` is the only one sent (SPEC §5). Back to the client, the upstream connection's
 * hop-by-hop headers are left behind, so the client's own connection (e.g. `Connection: close`)
 * is governed by this server alone.
 */
import type { IncomingHttpHeaders } from 'node:http'

/**
 * RFC 9110 §7.6.1 connection-specific fields, plus the legacy ones clients still send
 * (`Keep-Alive`, `Proxy-Connection`) and `HTTP2-Settings` (RFC 7540 §3.2.1).
 */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings']

/** `Expect` asks this hop for a 100 (RFC 9110 §10.1.1); Node answers it, and undici refuses it (a 500 otherwise). */
const REQUEST_ONLY_HOP = ['expect']

/** Credentials and identity the client may try to pass on or forge. */
const CLIENT_CREDENTIALS = ['authorization', 'proxy-authorization', 'cookie']
const FORWARDING = ['forwarded', 'via', 'x-real-ip', 'true-client-ip', 'x-client-ip', 'x-cluster-client-ip', 'cf-connecting-ip', 'fastly-client-ip']

/**
 * Headers some frameworks honour in place of the request line: `X-Original-URL`/`X-Rewrite-URL`
 * would let a client reach the token endpoint behind an innocent path, and a method override would
 * turn a GET, which the proxy may retry after a 401, into a POST paid twice.
 */
const OVERRIDES = ['x-original-url', 'x-rewrite-url', 'x-http-method-override', 'x-http-method', 'x-method-override']

const DROPPED_UPSTREAM: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP,
  ...REQUEST_ONLY_HOP,
  ...CLIENT_CREDENTIALS,
  ...FORWARDING,
  ...OVERRIDES,
])
const DROPPED_DOWNSTREAM: ReadonlySet<string> = new Set(HOP_BY_HOP)

/** True for names that must not go upstream; `name` is lower case, as Node parses it. */
export function isDroppedHeader (name: string): boolean {
  return DROPPED_UPSTREAM.has(name) || name.startsWith('x-forwarded-') || isApiKeyLookalike(name)
}

/**
 * `api-key`, `api_key`, `apikey`, `x-api-key`, `x_api.key`, `x-hc-api-key`, ...: look-alikes of the provider's key
 * header.
 */
function isApiKeyLookalike (name: string): boolean {
  // Without a "k" the stripped name cannot end in "apikey": most names skip the copy the regex makes.
  return name.includes('k') && name.replace(/[-_.]/g, '').endsWith('apikey')
}

/**
 * `headers` are the client's (lower-case names, as Node parses them); reply-from has already set
 * `host` to the upstream's. Returns a new object; the input is not modified. A request without a
 * `Content-Type` gets the provider's (SPEC §1: every request carries `application/json`); one the
 * client sent goes as sent.
 */
export function buildUpstreamHeaders (
  headers: IncomingHttpHeaders,
  token: string,
  requestId: string,
): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {}
  const listed = connectionListed(headers.connection)
  for (const name in headers) {
    if (isDroppedHeader(name) || listed.has(name)) continue
    out[name] = headers[name]
  }
  out.authorization = `Bearer ${token}`
  out['x-request-id'] = requestId
  out['content-type'] ??= 'application/json'
  return out
}

/**
 * The upstream response's headers without those of the upstream connection (RFC 9110 §7.6.1):
 * relayed, an upstream `Connection: keep-alive` would override a client's `Connection: close`, and
 * its `Keep-Alive: timeout=` would describe a connection the client is not on. Node frames the
 * body for the client itself. Names are lower case, as undici delivers them. Returns a new object.
 */
export function buildClientResponseHeaders (headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {}
  const listed = connectionListed(headers.connection)
  for (const name in headers) {
    if (DROPPED_DOWNSTREAM.has(name) || listed.has(name)) continue
    out[name] = headers[name]
  }
  return out
}

/**
 * Node refuses header blocks over 16 KiB (431) but not many small fields: past its
 * `maxHeadersCount` (2000) it drops them silently. A payments client sends a dozen or two.
 */
export const MAX_REQUEST_HEADER_FIELDS = 100

export type HeaderProblem = { status: 400 | 431, reason: string }

/**
 * What the parsed `headers` object hides: the number of fields, and a repeated `Host`, which Node
 * reduces to the first one while another parser may take the last (RFC 9112 §3.2: answer 400).
 * `rawHeaders` is Node's flat `[name, value, name, value, ...]` list.
 */
export function requestHeaderProblem (rawHeaders: readonly string[]): HeaderProblem | null {
  if (rawHeaders.length / 2 > MAX_REQUEST_HEADER_FIELDS) return { status: 431, reason: `more than ${MAX_REQUEST_HEADER_FIELDS} header fields` }
  let hosts = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++
  }
  return hosts > 1 ? { status: 400, reason: 'more than one Host header field' } : null
}

/** Names listed in `Connection` are hop-by-hop too (RFC 9110 §7.6.1). */
function connectionListed (value: string | undefined): ReadonlySet<string> {
  if (value === undefined || value === '') return NONE
  // What upstreams and clients send nearly always; both names are dropped anyway.
  const lower = value.toLowerCase()
  if (lower === 'keep-alive' || lower === 'close') return NONE
  return new Set(lower.split(',').map((s) => s.trim()).filter((s) => s !== ''))
}

const NONE: ReadonlySet<string> = new Set()
