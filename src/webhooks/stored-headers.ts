/**
 * Which of the provider's headers are kept with an event and passed on at delivery (SPEC §10):
 * not hop-by-hop ones (RFC 9110 §7.6.1), `Host`, `Content-Length`, `Cookie`, `Authorization`,
 * `X-Forwarded-*`, nor the verification header, which carries the provider's secret. Provider
 * headers named like Standard Webhooks' own are renamed so they cannot be taken for ours.
 */

const DROPPED = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authorization', 'proxy-authenticate',
  'host', 'content-length', 'cookie', 'authorization', 'expect', 'forwarded', 'x-real-ip',
])
const RENAMED = new Set(['webhook-id', 'webhook-timestamp', 'webhook-signature'])

export type HeaderList = Array<[string, string]>

/** Pure: Node's `rawHeaders` -> the lower-cased list to store, in the order received. */
export function headersToStore (rawHeaders: readonly string[], verificationHeader: string | null): HeaderList {
  const connectionListed = new Set<string>()
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === 'connection') for (const name of (rawHeaders[i + 1] ?? '').split(',')) connectionListed.add(name.trim().toLowerCase())
  }
  const out: HeaderList = []
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] ?? '').toLowerCase()
    const value = rawHeaders[i + 1] ?? ''
    if (DROPPED.has(name) || connectionListed.has(name) || name.startsWith('x-forwarded-') || name === verificationHeader) continue
    out.push([RENAMED.has(name) ? `x-provider-${name}` : name, value])
  }
  return out
}
