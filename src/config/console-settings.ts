/**
 * `PROXY_CONSOLE_*` (SPEC §14) -> ConsoleConfig, or null when `PROXY_CONSOLE_LISTEN` is not set (the
 * console is off). Every problem names its variable and rule.
 */
import { isIP } from 'node:net'
import { JSON_POINTER_PATTERN } from '../json/strict-json.js'
import { parseCidrs, parseHostPort, splitList, type Cidr } from './network-lists.js'
import type { RawSettings } from './schema.js'

export interface ConsoleConfig {
  listen: { host: string, port: number }
  /**
   * The console's origin as people reach it (scheme, host, port; no path): the `Origin` every form must carry, the base
   * of sign-in links.
   */
  publicUrl: string
  allowedClients: readonly Cidr[]
  trustedProxies: readonly Cidr[]
  /** Lower case; read only from a peer in trustedProxies. */
  userHeader: string
  /** `alice@example.com` or `*@example.com`, lower case. */
  approvers: readonly string[]
  /** Cookies carry `Secure` unless the listener is loopback and the public URL is plain http. */
  secureCookies: boolean
  /** The request body's members an approval's card shows as labelled lines above the body (JSON Pointers). */
  detailPointers: readonly string[]
  /** Sign-in links and sessions live beside approvals: this SQLite file, or Redis with PROXY_REDIS_URL. */
  storePath: string
}

const JSON_POINTER = new RegExp(JSON_POINTER_PATTERN)
const EMAIL = /^[^\s@,*]+@[^\s@,*]+$/
const DOMAIN_PATTERN = /^\*@[^\s@,*]+$/

export function resolveConsole (settings: RawSettings, problems: string[], warnings: string[]): ConsoleConfig | null {
  const text = settings.PROXY_CONSOLE_LISTEN
  if (text === undefined) {
    const given = (['PROXY_CONSOLE_PUBLIC_URL', 'PROXY_CONSOLE_APPROVERS'] as const).filter((name) => settings[name] !== undefined && settings[name] !== '')
    if (given.length > 0) warnings.push(`${given.join(', ')} set but PROXY_CONSOLE_LISTEN is not: the console is off`)
    return null
  }
  const listen = parseHostPort(text)
  if (listen === null) problems.push('PROXY_CONSOLE_LISTEN must be <IP address>:<port>, such as 127.0.0.1:8090 or [::1]:8090')
  const address = listen ?? { host: '127.0.0.1', port: 0 }
  const publicUrl = resolvePublicUrl(settings.PROXY_CONSOLE_PUBLIC_URL, address, problems)
  const allowedClients = parseCidrs(settings.PROXY_CONSOLE_ALLOWED_CLIENTS, 'PROXY_CONSOLE_ALLOWED_CLIENTS', problems)
  const trustedProxies = parseCidrs(settings.PROXY_CONSOLE_TRUSTED_PROXIES, 'PROXY_CONSOLE_TRUSTED_PROXIES', problems)
  const approvers = splitList(settings.PROXY_CONSOLE_APPROVERS).map((entry) => entry.toLowerCase())
  for (const entry of approvers) {
    if (!EMAIL.test(entry) && !DOMAIN_PATTERN.test(entry)) problems.push(`PROXY_CONSOLE_APPROVERS: "${entry}" is neither an email address nor *@<domain>`)
  }
  const detailPointers = splitList(settings.PROXY_CONSOLE_DETAIL_POINTERS)
  for (const pointer of detailPointers) {
    if (!JSON_POINTER.test(pointer)) {
      problems.push(`PROXY_CONSOLE_DETAIL_POINTERS: "${pointer}" is not a JSON Pointer (RFC 6901), such as /payoutMethod/accountName`)
    }
  }
  if (approvers.length === 0) warnings.push('PROXY_CONSOLE_APPROVERS is empty: everyone who signs in to the console sees it read-only')
  const loopback = isLoopback(address.host)
  return {
    listen: address,
    publicUrl,
    allowedClients,
    trustedProxies,
    userHeader: settings.PROXY_CONSOLE_USER_HEADER.toLowerCase(),
    approvers,
    detailPointers,
    secureCookies: !loopback || publicUrl.startsWith('https:'),
    storePath: settings.PROXY_WEBHOOK_STORE_PATH,
  }
}

function resolvePublicUrl (
  text: string | undefined,
  listen: { host: string, port: number },
  problems: string[],
): string {
  if (text === undefined) {
    if (listen.host === '0.0.0.0' || listen.host === '::') {
      problems.push('PROXY_CONSOLE_PUBLIC_URL is required when PROXY_CONSOLE_LISTEN is on every address: the URL people reach the console at (forms are accepted only from it)')
    }
    return `http://${isIP(listen.host) === 6 ? `[${listen.host}]` : listen.host}:${listen.port}`
  }
  const url = URL.canParse(text) ? new URL(text) : null
  if (url === null || !['http:', 'https:'].includes(url.protocol) || url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '' || text.endsWith('#') || text.endsWith('?')) {
    problems.push('PROXY_CONSOLE_PUBLIC_URL must be an http:// or https:// origin without a path, such as https://console.internal.example.com (the console is served at the root of its host)')
    return 'http://invalid'
  }
  return url.origin
}

function isLoopback (host: string): boolean {
  return host.startsWith('127.') || host === '::1'
}
