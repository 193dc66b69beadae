/**
 * Finds the address the provider sees our requests come from, through the same dispatcher as
 * upstream calls (same pools, same IPv4 pinning), so operators know what to allowlist for
 * production fiat payouts (provider dashboard: Developers -> IP Addresses). Never fatal: an
 * unreachable echo service is a warning and the next check is on schedule.
 */
import { isIP } from 'node:net'
import type { Logger } from 'pino'
import type { Dispatcher } from 'undici'
import type { Clock, TimerHandle } from '../clock.js'

const CHECK_TIMEOUT_MS = 5_000
const MAX_BODY_BYTES = 256
export const ALLOWLIST_HINT = 'add this address in the provider dashboard under Developers -> IP Addresses (IPv4 only)'

export interface EgressReporterOptions {
  url: string | null
  intervalMs: number
  expectedIps: readonly string[]
  dispatcher: Dispatcher
  clock: Clock
  log: Logger
  onUpdate?: (ip: string | null, expected: boolean | null) => void
}

/** What readiness shows of the egress IP. */
export interface EgressView {
  current(): string | null
  /** null when PROXY_EXPECTED_EGRESS_IPS is not set. */
  isExpected(): boolean | null
}

export interface EgressReporter extends EgressView {
  start(): void
  /** One check now; resolves to the address, or null when it could not be found. */
  check(): Promise<string | null>
  close(): void
}

export function createEgressReporter (options: EgressReporterOptions): EgressReporter {
  const { url, intervalMs, expectedIps, dispatcher, clock, onUpdate } = options
  const log = options.log.child({ component: 'egress' })
  let current: string | null = null
  let timer: TimerHandle | null = null
  let closed = false

  const isExpected = (): boolean | null => expectedIps.length === 0 || current === null
    ? null
    : expectedIps.includes(current)

  async function check (): Promise<string | null> {
    if (url === null) return null
    let ip: string
    try {
      ip = await fetchIp(url, dispatcher)
    } catch (err) {
      log.warn({ err, url }, 'egress IP check failed; will retry')
      return null
    }
    const previous = current
    current = ip
    // One message for first sight and change (SPEC §5), so a search for it finds every address to allowlist.
    if (previous === null) log.info({ egressIp: ip, hint: ALLOWLIST_HINT }, 'egress IP for allowlisting')
    else if (previous !== ip) log.warn({ previousEgressIp: previous, egressIp: ip, hint: ALLOWLIST_HINT }, 'egress IP for allowlisting')
    const expected = isExpected()
    if (expected === false) log.error({ egressIp: ip, expectedEgressIps: expectedIps }, 'egress IP is not in PROXY_EXPECTED_EGRESS_IPS: production fiat payouts will fail with IP_NOT_ALLOWED')
    onUpdate?.(ip, expected)
    return ip
  }

  function schedule (): void {
    if (closed || url === null) return
    timer = clock.setTimeout(() => { void check().finally(schedule) }, intervalMs)
  }

  return {
    start () {
      if (url === null) { log.info('egress IP check disabled (PROXY_EGRESS_IP_URL=off)'); return }
      void check().finally(schedule)
    },
    check,
    current: () => current,
    isExpected,
    close () {
      closed = true
      if (timer !== null) clock.clearTimeout(timer)
    },
  }
}

async function fetchIp (url: string, dispatcher: Dispatcher): Promise<string> {
  const { origin, pathname, search } = new URL(url)
  const { statusCode, body } = await dispatcher.request({
    origin, path: pathname + search, method: 'GET', headers: { accept: 'text/plain' }, signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
  })
  let text = ''
  for await (const chunk of body) {
    text += (chunk as Buffer).toString('latin1')
    if (text.length > MAX_BODY_BYTES) { body.destroy(); throw new Error('IP echo answer too long') }
  }
  if (statusCode !== 200) throw new Error(`IP echo answered HTTP ${statusCode}`)
  const ip = text.trim()
  if (isIP(ip) === 0) throw new Error('IP echo answer is not an IP address')
  return ip
}
