/**
 * `payments-auth-proxy payments list|show|recheck` (SPEC §12), on the same store as the sidecar,
 * whether it runs or not. A recheck makes a payment that is not final (a stale one included)
 * `pending` again on the schedule counted from now, with a look-up wanted at once: a running sidecar
 * makes it within 2 s (its loop looks once a second), a stopped one at its next start. Everything a
 * caller or the provider chose (references, statuses, ids) is printed terminal-safe.
 */
import { parseArgs } from 'node:util'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Config } from '../config/config.js'
import type { PaymentsConfig } from '../config/payment-config.js'
import { inFlightTtlMs } from '../idempotency/idempotency-plugin.js'
import type { Storage } from '../storage/storage.js'
import { terminalJson, terminalText } from '../text/terminal-safe.js'
import { openPaymentStore } from './open-payment-store.js'
import { machineContext } from './payment-context.js'
import type { PaymentMetrics } from './payment-metrics.js'
import { PAYMENT_STATES, isFinal, type PaymentRecord, type PaymentState } from './payment-record.js'
import type { PaymentStore } from './payment-store.js'
import { createPaymentUpdater } from './payment-updater.js'
import { paymentView } from './payment-view.js'
import { PAYMENT_ID } from '../objects/payment-id.js'

export const PAYMENTS_USAGE = `usage: payments-auth-proxy payments list [--state ${PAYMENT_STATES.join('|')}] [--since <ISO time>] [--json]
       payments-auth-proxy payments show <id or reference>
       payments-auth-proxy payments recheck <id or reference>...`

export interface CommandIo { out: (text: string) => void, err: (text: string) => void, clock: Clock }

const LIST_LIMIT = 100_000
/** The sidecar counts; a command does not. */
const uncounted: PaymentMetrics = { tracked () {}, settled () {}, lookup () {}, event () {}, pass () {} }

/** Returns the exit code: 0 done, 1 not found, 2 usage or configuration. */
export async function runPaymentsCommand (
  args: readonly string[],
  config: Config,
  deps: { log: Logger, storage: Storage },
  io: CommandIo,
): Promise<number> {
  const { log, storage } = deps
  let parsed
  try {
    parsed = parseArgs({ args: [...args], allowPositionals: true, options: { state: { type: 'string' }, since: { type: 'string' }, json: { type: 'boolean' } } })
  } catch (err) {
    io.err(`${(err as Error).message}\n${PAYMENTS_USAGE}\n`)
    return 2
  }
  const [verb, ...targets] = parsed.positionals
  const { state, since, json } = parsed.values
  const sinceMs = since === undefined ? undefined : Date.parse(since)
  const usable = (verb === 'list' && targets.length === 0 && (state === undefined || PAYMENT_STATES.includes(state as PaymentState)) && !Number.isNaN(sinceMs)) ||
    (verb === 'show' && targets.length === 1) || (verb === 'recheck' && targets.length > 0)
  if (!usable) {
    io.err(`${PAYMENTS_USAGE}\n`)
    return 2
  }
  const settings = config.payments
  if (settings === null) {
    io.err('payments-auth-proxy: payments are not followed (PROXY_PAYMENTS=on and the other PROXY_PAYMENTS_ settings of the sidecar)\n')
    return 2
  }
  const store = await openPaymentStore(settings, storage, log)
  try {
    if (verb === 'list') return await list(store, { state: state as PaymentState | undefined, sinceMs }, json === true, io)
    if (verb === 'show') return await show(store, targets[0] as string, io)
    return await recheck(store, targets, { ...config, payments: settings }, log, io)
  } finally {
    await store.close()
  }
}

async function find (store: PaymentStore, text: string): Promise<PaymentRecord | null> {
  return (PAYMENT_ID.test(text) ? await store.get(text) : null) ?? await store.byReference(text, {})
}

const time = (ms: number | null): string => ms === null ? '-' : new Date(ms).toISOString()

async function list (
  store: PaymentStore,
  query: { state: PaymentState | undefined, sinceMs: number | undefined },
  json: boolean,
  io: CommandIo,
): Promise<number> {
  const payments = await store.list({ ...query, limit: LIST_LIMIT })
  if (json) {
    for (const payment of payments) io.out(`${terminalJson(paymentView(payment))}\n`)
    return 0
  }
  io.out('id\tstate\tcaller\tamount\treference\ttransaction\tcreated\tsettled by\n')
  for (const p of payments) {
    const amount = p.amount === null ? '-' : `${p.amount} ${terminalText(p.currency ?? '')}`
    io.out(`${p.id}\t${p.state}\t${p.caller}\t${amount}\t${terminalText(p.externalReference)}\t${p.transactionId === null ? '-' : terminalText(p.transactionId)}\t${time(p.createdAtMs)}\t${p.settledBy ?? '-'}\n`)
  }
  return 0
}

async function show (store: PaymentStore, text: string, io: CommandIo): Promise<number> {
  const payment = await find(store, text)
  if (payment === null) {
    io.err(`payments-auth-proxy: no payment ${terminalText(text)}\n`)
    return 1
  }
  io.out(`${terminalJson(paymentView(payment), 2)}\n`)
  return 0
}

async function recheck (
  store: PaymentStore,
  targets: readonly string[],
  config: Config & { payments: PaymentsConfig },
  log: Logger,
  io: CommandIo,
): Promise<number> {
  const apply = createPaymentUpdater({
    store,
    context: machineContext(config.payments, inFlightTtlMs(config)),
    clock: io.clock,
    log,
    metrics: uncounted,
  })
  let code = 0
  for (const text of targets) {
    const payment = await find(store, text)
    if (payment === null) {
      io.err(`payments-auth-proxy: no payment ${terminalText(text)}\n`)
      code = 1
      continue
    }
    if (isFinal(payment.state)) {
      io.out(`${payment.id}\t${payment.state}\talready final: nothing to look up\n`)
      continue
    }
    const { record } = await apply(payment, { kind: 'recheck' })
    const now = record ?? payment
    io.out(`${now.id}\t${now.state}\t${now.lookupNow ? 'looked up again within 2 s by a running sidecar' : 'cannot be looked up (no transaction id, or no look-up path for its interface): its schedule starts again'}\n`)
  }
  return code
}
