/**
 * The fake provider's transactions (SPEC §12), off unless turned on (tests, `npm run demo`): a
 * `POST …/payouts` is answered `pending` with a transaction id (the same reference again gets the
 * same transaction, as the provider asks references to be used as idempotency keys), `GET
 * …/transactions/{id}` answers its status, and the status turns final on its own `settleAfterMs`
 * after creation. When a webhook URL is set, each change is sent there as the provider does: a
 * static secret in `x-webhook-signature`, at most four attempts within about a minute (5 s, 15 s,
 * 45 s). Answers are shaped `{success, message, data: {transactionId, externalReference, status,
 * amount, currency}}`.
 */
import { randomBytes } from 'node:crypto'
import { sendJson } from './http-io.js'
import type { FakeTransaction, TransactionOptions, Transactions } from './types.js'

const PAYOUT = /\/payouts\/?$/i
const LOOKUP = /^\/transactions\/([^/]+)\/?$/
const RETRIES_MS = [5_000, 15_000, 45_000]

export function createTransactions (now: () => number): Transactions {
  let options: Required<TransactionOptions> | null = null
  const byId = new Map<string, FakeTransaction>()
  const byReference = new Map<string, FakeTransaction>()
  const timers = new Set<NodeJS.Timeout>()
  const lookups = new Map<string, number>()

  const later = (fn: () => void, ms: number): void => {
    const timer = setTimeout(() => { timers.delete(timer); fn() }, ms)
    timer.unref()
    timers.add(timer)
  }
  const view = (tx: FakeTransaction): Record<string, unknown> => ({
    transactionId: tx.transactionId,
    externalReference: tx.externalReference,
    status: tx.status,
    amount: tx.amount,
    currency: tx.currency,
  })

  async function post (body: unknown, attempt: number): Promise<number> {
    const webhook = options?.webhook
    if (webhook == null) return 0
    const status = await fetch(webhook.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-webhook-signature': webhook.secret }, body: JSON.stringify(body) })
      .then(async (res) => { await res.arrayBuffer(); return res.status }, () => 0)
    const wait = RETRIES_MS[attempt]
    if ((status < 200 || status >= 300) && wait !== undefined) later(() => { void post(body, attempt + 1) }, wait)
    return status
  }

  function setStatus (transactionId: string, status: string): void {
    const tx = byId.get(transactionId)
    if (tx === undefined || tx.status === status) return
    tx.status = status
    void post({ event: 'payout.status.updated', data: view(tx) }, 0)
  }

  return {
    get enabled () { return options !== null },
    configure (next) {
      options = next === null ? null : { settleAfterMs: next.settleAfterMs ?? 3_000, finalStatus: next.finalStatus ?? 'successful', webhook: next.webhook ?? null }
    },
    handle (server, environment, method, path, body, res) {
      if (options === null) return false
      const lookup = LOOKUP.exec(path)
      if (method === 'GET' && lookup !== null) {
        const id = decodeURIComponent(lookup[1] as string)
        lookups.set(id, (lookups.get(id) ?? 0) + 1)
        const tx = byId.get(id)
        if (tx === undefined || tx.environment !== environment) sendJson(res, 404, { success: false, message: 'Transaction not found' })
        else sendJson(res, 200, { success: true, message: 'Transaction retrieved', data: view(tx) })
        return true
      }
      if (method !== 'POST' || !PAYOUT.test(path)) return false
      let request: Record<string, unknown>
      try {
        request = JSON.parse(body.toString('utf8')) as Record<string, unknown>
      } catch {
        sendJson(res, 400, { success: false, message: 'Malformed JSON body' })
        return true
      }
      const reference = request['externalReference']
      if (typeof reference !== 'string' || reference === '') {
        sendJson(res, 400, { success: false, message: 'externalReference is required' })
        return true
      }
      const known = byReference.get(`${environment}:${reference}`)
      if (known !== undefined) {
        sendJson(res, 200, { success: true, message: 'Payout already initiated', data: view(known) })
        return true
      }
      const tx: FakeTransaction = {
        transactionId: `txn_${randomBytes(9).toString('base64url')}`, environment, interface: server, externalReference: reference, amount: request['amount'] ?? null, currency: request['currency'] ?? null, status: 'pending', createdAtMs: now(),
      }
      byId.set(tx.transactionId, tx)
      byReference.set(`${environment}:${reference}`, tx)
      const { finalStatus } = options
      later(() => { if (tx.status === 'pending') setStatus(tx.transactionId, finalStatus) }, options.settleAfterMs)
      sendJson(res, 200, { success: true, message: 'Payout initiated', data: view(tx) })
      return true
    },
    list: () => [...byId.values()],
    setStatus,
    lookups,
    sendEvent: async (body) => await post(body, RETRIES_MS.length),
    close () {
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
    },
  }
}
