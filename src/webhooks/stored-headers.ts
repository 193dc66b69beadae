/**
 * Which of the provider's headers are kept with an event and passed on at delivery (SPEC §10):
 * not hop-by-hop ones (RFC 9110 §7.6.1), `Host`, `Content-Length`, `Cookie`, `Authorization`,
 * `X-Forwarded-*`, nor the verification header, which carries the provider's secret whether or not
 * the sidecar checks it. Provider headers named like Standard Webhooks' own are renamed
 * `x-provider-webhook-*`, and a sender's own `webhook-conflict` and `x-provider-webhook-*` are
 * dropped: those names only ever carry what the sidecar says.
 */
import type { HeaderList } from '../outbox/outbox-store.js'

const DROPPED = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authorization', 'proxy-authenticate',
  'host', 'content-length', 'cookie', 'authorization', 'expect', 'forwarded', 'x-real-ip', 'webhook-conflict',
])
const RENAMED = new Set(['webhook-id', 'webhook-timestamp', 'webhook-signature'])
const RENAMED_PREFIX = 'x-provider-'

/**
 * Pure: Node's `rawHeaders` -> the lower-cased list to store, in the order received. `verificationHeader` is lower
 * case.
 */
export function headersToStore (rawHeaders: readonly string[], verificationHeader: string): HeaderList {
  const pairs = pairsOf(rawHeaders)
  const connectionListed = new Set<string>()
  for (const [name, value] of pairs) if (name === 'connection') for (const listed of value.split(',')) connectionListed.add(listed.trim().toLowerCase())
  const out: HeaderList = []
  for (const [name, value] of pairs) {
    if (DROPPED.has(name) || connectionListed.has(name) || name.startsWith('x-forwarded-') || name.startsWith(`${RENAMED_PREFIX}webhook-`) || name === verificationHeader) continue
    out.push([RENAMED.has(name) ? `${RENAMED_PREFIX}${name}` : name, value])
  }
  return out
}

/** Node's `rawHeaders` is name, value, name, value…: the pairs, names lower-cased. */
function pairsOf (rawHeaders: readonly string[]): HeaderList {
  const pairs: HeaderList = []
  // Stryker disable next-line EqualityOperator,StringLiteral: the list always holds whole pairs (even length), so `<=`
  // reads no other pair and the fallbacks are never taken
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) pairs.push([(rawHeaders[i] ?? '').toLowerCase(), rawHeaders[i + 1] ?? ''])
  return pairs
}
