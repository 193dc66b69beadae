/**
 * The authorization server's metadata, read once at start (SPEC §15): RFC 8414's
 * `/.well-known/oauth-authorization-server` (path-inserted after the issuer's origin), else
 * OpenID Connect discovery (`<issuer>/.well-known/openid-configuration`). Its `issuer` must be the
 * configured one exactly (RFC 8414 §3.3: a document another issuer published is refused), and its
 * `jwks_uri` https (http only on loopback, as the issuer).
 */
import { webUrl } from '../config/oauth-settings.js'
export interface IssuerMetadata {
  jwksUri: URL
  /** Where the document was read, for `check`. */
  readFrom: string
}

const TIMEOUT_MS = 5000
const MAX_BYTES = 256 * 1024

/** Why the metadata could not be read, in one line that quotes nothing the server sent. */
export class IssuerMetadataError extends Error {}

export function metadataUrls (issuer: string): string[] {
  const url = new URL(issuer)
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '')
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
  ]
}

export async function readIssuerMetadata (issuer: string): Promise<IssuerMetadata> {
  const failures: string[] = []
  for (const url of metadataUrls(issuer)) {
    const read = await readDocument(url)
    if (typeof read === 'string') { failures.push(`${url}: ${read}`); continue }
    if (read['issuer'] !== issuer) throw new IssuerMetadataError(`${url} names another issuer than PROXY_MCP_OAUTH_ISSUER (RFC 8414 §3.3): set the issuer exactly as the server's metadata gives it`)
    const jwks = read['jwks_uri']
    const jwksUri = typeof jwks === 'string' ? webUrl(jwks) : null
    if (jwksUri === null) {
      throw new IssuerMetadataError(`${url} has no https jwks_uri: its access tokens could not be verified`)
    }
    return { jwksUri, readFrom: url }
  }
  throw new IssuerMetadataError(`the authorization server's metadata could not be read (${failures.join('; ')})`)
}

async function readDocument (url: string): Promise<Record<string, unknown> | string> {
  try {
    // Node's fetch, as jose's key fetches: a metadata document is where the issuer says, or nowhere.
    const res = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) })
    if (res.status !== 200 || res.body === null) { await res.body?.cancel(); return `answered ${res.status}` }
    let size = 0
    const chunks: Uint8Array[] = []
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      const chunk: Uint8Array = read.value
      size += chunk.length
      if (size > MAX_BYTES) { await reader.cancel(); return `larger than ${MAX_BYTES} bytes` }
      chunks.push(chunk)
    }
    const document: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    return typeof document === 'object' && document !== null && !Array.isArray(document) ? document as Record<string, unknown> : 'not a JSON object'
  } catch (err) {
    if (err instanceof SyntaxError) return 'not JSON'
    const cause = (err as { cause?: { code?: string } }).cause?.code
    return `unreachable (${cause ?? (err as { name?: string }).name ?? 'error'})`
  }
}
