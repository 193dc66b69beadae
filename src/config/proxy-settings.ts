/**
 * The proxy's own settings, the part of the configuration that is not an environment's nor a
 * feature's: its listener, tokens, upstream, access lists, egress report, idempotency and store.
 */
import { isIP } from 'node:net'
import { checkBaseUrl } from './base-urls.js'
import type { Config } from './config.js'
import { isHostName, parseCidr, splitList, type Cidr } from './network-lists.js'
import type { RawSettings } from './schema.js'
import { JSON_POINTER_PATTERN } from '../json/strict-json.js'

export type ProxySettings = Omit<Config, 'environments' | 'baseUrls' | 'defaultEnvironment' | 'secretFiles' | 'webhooks' | 'approvals' | 'payments' | 'duplicates' | 'oauth' | 'mcp' | 'console'>

export function resolveProxySettings (
  settings: RawSettings,
  redisUrl: string | null,
  problems: string[],
  warnings: string[],
): ProxySettings {
  const access = {
    allowedClients: parseList(settings.PROXY_ALLOWED_CLIENTS, 'PROXY_ALLOWED_CLIENTS', parseCidr, 'a CIDR such as 10.0.0.0/8 or an IP address', problems),
    allowedHosts: parseList(settings.PROXY_ALLOWED_HOSTS, 'PROXY_ALLOWED_HOSTS', (s) => isHostName(s) ? s.toLowerCase() : null, 'a host name without port', problems),
  }
  const egress = resolveEgress(settings, problems)
  checkTokenTiming(settings, problems, warnings)
  checkListenHost(settings.PROXY_HOST, problems)
  checkReferencePointer(settings.PROXY_IDEMPOTENCY_KEY_POINTER, problems)
  return {
    listen: { host: settings.PROXY_HOST, port: settings.PROXY_PORT },
    token: {
      refreshMarginS: settings.PROXY_TOKEN_REFRESH_MARGIN_SECONDS,
      timeoutS: settings.PROXY_TOKEN_TIMEOUT_SECONDS,
      maxLifetimeS: settings.PROXY_TOKEN_MAX_LIFETIME_SECONDS,
      retryMinS: settings.PROXY_TOKEN_RETRY_MIN_SECONDS,
      retryMaxS: settings.PROXY_TOKEN_RETRY_MAX_SECONDS,
    },
    upstream: {
      timeoutS: settings.PROXY_UPSTREAM_TIMEOUT_SECONDS,
      connections: settings.PROXY_UPSTREAM_CONNECTIONS,
      ipFamily: settings.PROXY_OUTBOUND_IP_FAMILY,
    },
    access,
    bodyLimitBytes: settings.PROXY_BODY_LIMIT_BYTES,
    egress,
    shutdownGraceS: settings.PROXY_SHUTDOWN_GRACE_SECONDS,
    logLevel: settings.LOG_LEVEL,
    callers: { file: settings.PROXY_CALLERS_FILE ?? null },
    idempotency: {
      enabled: settings.PROXY_IDEMPOTENCY === 'on',
      keyPointer: settings.PROXY_IDEMPOTENCY_KEY_POINTER,
      ttlS: settings.PROXY_IDEMPOTENCY_TTL_SECONDS,
    },
    paths: { allowDots: settings.PROXY_PATH_ALLOW_DOTS === 'true' },
    state: { redisUrl, keyPrefix: settings.PROXY_REDIS_KEY_PREFIX },
  }
}

/** Run once the configuration is whole: a listener open to other hosts that admits loopback only. */
export function accessWarnings (proxy: Pick<Config, 'listen' | 'access'>): string[] {
  const { host } = proxy.listen
  if (isLoopbackBind(host) || !proxy.access.allowedClients.every(isLoopbackCidr)) return []
  return [`PROXY_HOST=${host} accepts connections from other hosts, but PROXY_ALLOWED_CLIENTS allows loopback only: right for a sidecar whose application shares its network namespace (same Pod, compose network_mode); otherwise set PROXY_ALLOWED_CLIENTS to your applications' network`]
}

function resolveEgress (settings: RawSettings, problems: string[]): Config['egress'] {
  const expectedIps = parseList(settings.PROXY_EXPECTED_EGRESS_IPS, 'PROXY_EXPECTED_EGRESS_IPS', (s) => isIP(s) !== 0 ? s : null, 'an IP address', problems)
  let url: string | null = null
  if (settings.PROXY_EGRESS_IP_URL.toLowerCase() !== 'off') {
    const checked = checkBaseUrl(settings.PROXY_EGRESS_IP_URL)
    if (checked.ok) url = settings.PROXY_EGRESS_IP_URL
    else problems.push(`PROXY_EGRESS_IP_URL ${checked.problem} (or 'off')`)
  }
  return { url, intervalS: settings.PROXY_EGRESS_IP_INTERVAL_SECONDS, expectedIps }
}

function checkTokenTiming (settings: RawSettings, problems: string[], warnings: string[]): void {
  if (settings.PROXY_TOKEN_RETRY_MIN_SECONDS > settings.PROXY_TOKEN_RETRY_MAX_SECONDS) {
    problems.push('PROXY_TOKEN_RETRY_MIN_SECONDS must not exceed PROXY_TOKEN_RETRY_MAX_SECONDS')
  } else if (settings.PROXY_TOKEN_RETRY_MIN_SECONDS * 2 > settings.PROXY_TOKEN_REFRESH_MARGIN_SECONDS) {
    // Retries are spaced at least half the minimum apart, even when that passes the token's expiry.
    warnings.push('PROXY_TOKEN_RETRY_MIN_SECONDS is over half of PROXY_TOKEN_REFRESH_MARGIN_SECONDS: after a failed refresh the token may lapse before the next attempt')
  }
}

function checkListenHost (host: string, problems: string[]): void {
  if (isIP(host) === 0 && host !== 'localhost') {
    problems.push('PROXY_HOST must be an IP address to listen on (e.g. 127.0.0.1, or 0.0.0.0 in a container)')
  }
}

const JSON_POINTER = new RegExp(JSON_POINTER_PATTERN)

/** A member, not the whole body: a pointer that can never match would turn idempotency off without a word. */
function checkReferencePointer (pointer: string, problems: string[]): void {
  if (pointer === '' || !JSON_POINTER.test(pointer)) {
    problems.push('PROXY_IDEMPOTENCY_KEY_POINTER must be a JSON Pointer (RFC 6901) to a member of the body, such as /externalReference or /meta/reference')
  }
}

function parseList<T> (
  value: string,
  name: string,
  parse: (s: string) => T | null,
  expected: string,
  problems: string[],
): T[] {
  const out: T[] = []
  for (const item of splitList(value)) {
    const parsed = parse(item)
    if (parsed === null) problems.push(`${name}: "${item}" is not ${expected}`)
    else out.push(parsed)
  }
  return out
}

function isLoopbackBind (host: string): boolean {
  return host === 'localhost' || host.startsWith('127.') || host === '::1'
}

function isLoopbackCidr (cidr: Cidr): boolean {
  return cidr.family === 'ipv4' ? cidr.address.startsWith('127.') && cidr.prefix >= 8 : cidr.address === '::1' && cidr.prefix === 128
}
