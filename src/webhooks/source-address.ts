/**
 * Who delivered a webhook (SPEC §10): the TCP peer, or, when the peer is a trusted proxy (the
 * operator's load balancer), the right-most `X-Forwarded-For` address that is not a trusted proxy.
 * Left-most entries are whatever the sender wrote, so only the right end can be believed.
 */
import { isIP, type BlockList } from 'node:net'
import { peerIn } from '../config/network-lists.js'

/** Pure: the source address, never taken from a header the peer could forge. */
export function sourceAddress (peer: string, forwardedFor: string | string[] | undefined, trusted: BlockList): string {
  if (!peerIn(trusted, peer) || forwardedFor === undefined) return unmapped(peer)
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map((h) => h.trim())
  for (let i = hops.length - 1; i >= 0; i--) {
    // Stryker disable next-line StringLiteral: i is always an index of hops, so the fallback never runs
    const hop = hops[i] ?? ''
    // Something that is not an address ends the chain: nothing to its left can be trusted either.
    if (isIP(hop) === 0) return unmapped(peer)
    if (!peerIn(trusted, hop)) return unmapped(hop)
  }
  return unmapped(hops[0] ?? peer)
}

/** `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) as `10.0.0.1`. */
function unmapped (address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address
}
