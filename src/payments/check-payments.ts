/**
 * `payments-auth-proxy check` for payments (SPEC §6, §12), when PROXY_PAYMENTS=on: the look-up of
 * each enabled environment and interface (or that crypto payments are settled by events alone when
 * it has none), how final events are confirmed, where notifications go, and whether the payments'
 * store can be reached: Redis answers, or the embedded file opens and its directory takes writes.
 * Nothing is written, so check run beside a live sidecar leaves its payments alone, and a file not
 * there yet is not created (the sidecar does that at its start).
 */
import type Database from 'better-sqlite3'
import type { Logger } from 'pino'
import { INTERFACES, type Config } from '../config/config.js'
import type { PaymentsConfig } from '../config/payment-config.js'
import { checkStoreFile } from '../sqlite/store-file-check.js'
import type { RedisConnection } from '../storage/redis-connection.js'
import type { Storage } from '../storage/storage.js'
import { eventSettledInterfaces, eventSettledWarning } from './event-settled.js'

export interface PaymentsCheck { ok: boolean, lines: string[] }

export async function checkPayments (
  config: Config & { payments: PaymentsConfig },
  deps: { log: Logger, storage: Storage },
): Promise<PaymentsCheck> {
  const { log, storage } = deps
  const settings = config.payments
  const lines: string[] = []
  for (const iface of INTERFACES) {
    const path = settings.lookupPaths[iface]
    const bases = Object.values(config.environments).flatMap((env) => env.baseUrls[iface] === undefined ? [] : [`${env.name} GET ${env.baseUrls[iface]}`])
    if (path === null) {
      const variable = iface === 'fiat' ? 'PROXY_PAYMENTS_LOOKUP_PATH=off' : 'PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH unset'
      lines.push(`ok    payments: ${iface} has no look-up path (${variable}): ${iface} payments are settled by events alone, and go stale without one`)
    } else if (bases.length === 0) {
      lines.push(`skip  payments: ${iface} look-up ${path}: no environment has a ${iface} base URL`)
    } else {
      for (const base of bases) lines.push(`ok    payments: ${iface} look-up: ${base}${path}`)
    }
  }
  for (const settled of eventSettledInterfaces(settings, config.environments)) lines.push(`warn  payments: ${eventSettledWarning(settled)}`)
  if (settings.confirm === 'lookup') lines.push('ok    payments: a final event settles a payment once a look-up agrees (PROXY_PAYMENTS_CONFIRM=lookup)')
  else if (config.webhooks?.verify?.scheme === 'hmac') lines.push('ok    payments: events alone settle payments (PROXY_PAYMENTS_CONFIRM=event, events signed with HMAC)')
  else lines.push('warn  payments: events alone settle payments (PROXY_PAYMENTS_CONFIRM=event) but the provider\'s events are not signed with HMAC: anyone who saw the webhook secret can settle a payment')
  if (config.webhooks === null) lines.push('warn  payments: the webhook inbox is off (PROXY_WEBHOOK_LISTEN): payments are settled by answers and look-ups alone')
  lines.push(`ok    payments: notifications to ${settings.notifyUrl}, signed with PROXY_WEBHOOK_SIGNING_SECRET`)
  const redis = await storage.redis()
  const store = redis !== null ? await checkRedis(redis, log) : await checkStoreFile(settings.storePath, 'payments store', countsIn)
  lines.push(store.line)
  return { ok: store.ok, lines }
}

async function checkRedis (redis: RedisConnection, log: Logger): Promise<{ ok: boolean, line: string }> {
  const { createRedisPaymentStore } = await import('./redis-payment-store.js')
  const store = await createRedisPaymentStore({ redis, log })
  try {
    const counts = await store.counts()
    return { ok: true, line: `ok    payments store: Redis answers, ${counts.pending} pending, ${counts.stale} stale` }
  } catch {
    // Never the URL: it may hold a password.
    return { ok: false, line: 'FAIL  payments store: Redis did not answer: check PROXY_REDIS_URL (or PROXY_REDIS_URL_FILE), its password and the network' }
  } finally {
    await store.close()
  }
}

/**
 * The payments' table is created at the sidecar's start: a file that is the inbox's or approvals' alone so far holds
 * none.
 */
function countsIn (db: Database.Database): string {
  if (db.prepare('SELECT 1 FROM sqlite_master WHERE type = \'table\' AND name = \'payments\'').get() === undefined) return '0 pending, 0 stale'
  const count = (state: string): number => (db.prepare('SELECT count(*) AS n FROM payments WHERE state = ?').get(state) as { n: number }).n
  return `${count('pending')} pending, ${count('stale')} stale`
}
