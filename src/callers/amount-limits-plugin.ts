/**
 * Carries out `amountLimits` (SPEC §7) as its own preHandler, registered after idempotency so a
 * replay, 409 or 422 is answered first and costs no amount. Day totals are reserved in the state
 * store when the request goes on (concurrent requests can never overshoot: `reserve` is atomic)
 * and given back when the answer shows no transaction happened: the provider answered 4xx, or the
 * proxy itself refused before forwarding. Any other answer, or none, keeps the amount counted.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.js'
import { AmountLimitExceededError, AmountUnreadableError } from '../errors.js'
import { heldJsonOf } from '../json/held-json.js'
import type { StateStore } from '../state/state-store.js'
import { BODY_METHODS, DAY_MS, dayTotalKey, judgeAmounts, utcDay, type ReadAmount } from './amount-limits.js'
import type { RefuseCaller } from './caller-refusals.js'

/** The proxy's own refusals that happen before anything is forwarded. */
const NOT_FORWARDED = new Set(['TOKEN_UNAVAILABLE', 'SHUTTING_DOWN', 'ENVIRONMENT_NOT_CONFIGURED', 'STATE_UNAVAILABLE'])

interface Reserved { key: string, units: bigint }

declare module 'fastify' {
  interface FastifyRequest {
    /** The amounts read, once, for every judge after this one (approvals); null when none were judged. */
    amounts: ReadAmount[] | null
    amountReservations: Reserved[] | null
  }
}

export interface AmountLimitsOptions {
  store: StateStore
  clock: Clock
  /** Logs and counts a refusal, as the callers plugin does. */
  refuse: RefuseCaller
}

export const amountLimitsPlugin = fp(async function amountLimitsPlugin (
  app: FastifyInstance,
  options: AmountLimitsOptions,
) {
  const { store, clock, refuse } = options
  app.decorateRequest('amounts', null)
  app.decorateRequest('amountReservations', null)

  async function giveBack (reserved: Reserved[]): Promise<void> {
    for (const r of reserved) await store.release(r.key, r.units)
  }

  app.addHook('preHandler', async (request) => {
    const caller = request.callerSpec
    const target = request.target
    if (caller === null ||
      target === null ||
      caller.amountLimits.length === 0 ||
      !BODY_METHODS.has(request.method)) return
    const verdict = judgeAmounts(caller.amountLimits, { path: target.folded, body: heldJsonOf(request), contentEncoding: request.headers['content-encoding'] })
    if (verdict.kind === 'unreadable') throw refuse(request, caller.id, new AmountUnreadableError(verdict.reason))
    if (verdict.kind === 'exceeded') throw refuse(request, caller.id, new AmountLimitExceededError(`Caller ${caller.id}: ${verdict.reason}`))
    const now = clock.wallMs()
    const day = utcDay(now)
    // The total lives until the UTC day ends (and an hour more, for clock skew between replicas).
    const ttlMs = (day + 1) * DAY_MS - now + 3_600_000
    request.amounts = verdict.amounts
    const reserved: Reserved[] = []
    for (const r of verdict.amounts) {
      if (r.perDay === null) continue
      const key = dayTotalKey(caller.id, r.entry, r.currency, day)
      let ok: boolean
      try {
        ok = await store.reserve(key, r.units, r.perDay, ttlMs)
      } catch (err) {
        await giveBack(reserved).catch(() => undefined)
        throw err
      }
      if (!ok) {
        await giveBack(reserved)
        throw refuse(request, caller.id, new AmountLimitExceededError(`Caller ${caller.id}: the day's total would be over the per-day limit`))
      }
      reserved.push({ key, units: r.units })
    }
    if (reserved.length > 0) request.amountReservations = reserved
  })

  app.addHook('onResponse', async (request, reply) => {
    const reserved = request.amountReservations
    if (reserved === null) return
    const status = reply.statusCode
    const code = reply.getHeader('x-proxy-error')
    const noTransaction = (status >= 400 && status < 500) || (typeof code === 'string' && NOT_FORWARDED.has(code))
    if (!noTransaction) return
    try {
      await giveBack(reserved)
    } catch (err) {
      // The amount stays counted: the safe direction for a limit.
      request.log.warn({ caller: request.caller?.id, err }, 'day total could not be given back')
    }
  })
}, { name: 'amount-limits', dependencies: ['caller-rules'] })
