/** Parsing of the comma-separated address settings (CIDRs, host names, IPs). */
import { BlockList, isIP } from 'node:net'

export interface Cidr { address: string, prefix: number, family: 'ipv4' | 'ipv6' }

export function splitList (value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter((s) => s !== '')
}

/** `10.0.0.0/8`, `::1/128`, or a bare address meaning a single host. */
export function parseCidr (text: string): Cidr | null {
  const [address = '', prefixText, extra] = text.split('/')
  if (extra !== undefined) return null
  const version = isIP(address)
  if (version === 0) return null
  const max = version === 4 ? 32 : 128
  const prefix = prefixText === undefined ? max : Number(prefixText)
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText !== undefined && !/^\d+$/.test(prefixText))) return null
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' }
}

const HOSTNAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i

/** A Host header name without port: a DNS name, an IPv4 address or a bracketed IPv6 address. */
export function isHostName (text: string): boolean {
  if (text.startsWith('[') && text.endsWith(']')) return isIP(text.slice(1, -1)) === 6
  return isIP(text) === 4 || HOSTNAME.test(text)
}

/** The CIDRs as a node:net BlockList, built once per list. */
export function blockListOf (cidrs: readonly Cidr[]): BlockList {
  const list = new BlockList()
  for (const cidr of cidrs) list.addSubnet(cidr.address, cidr.prefix, cidr.family)
  return list
}

/**
 * Whether a socket's peer address is in `list`; `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) counts as
 * `10.0.0.1`.
 */
export function peerIn (list: BlockList, peer: string): boolean {
  const address = peer.startsWith('::ffff:') && peer.includes('.') ? peer.slice(7) : peer
  const family = isIP(address)
  return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

/** `host:port` with an IP address (IPv6 in brackets), or null: the listeners' addresses. */
export function parseHostPort (text: string): { host: string, port: number } | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(text)
  const host = match?.[1]?.replace(/^\[|\]$/g, '') ?? ''
  const port = Number(match?.[2])
  return match === null || isIP(host) === 0 || port > 65535 ? null : { host, port }
}

/** A comma-separated list of CIDRs, each bad one reported naming `name`. */
export function parseCidrs (text: string, name: string, problems: string[]): Cidr[] {
  const out: Cidr[] = []
  for (const item of splitList(text)) {
    const cidr = parseCidr(item)
    if (cidr === null) problems.push(`${name}: "${item}" is not a CIDR such as 203.0.113.0/24 or an IP address`)
    else out.push(cidr)
  }
  return out
}
