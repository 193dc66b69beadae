/**
 * `GET /limits` on the proxy listener (SPEC §16): the asking caller's own limits today, so an agent
 * can plan a payout that fits instead of learning the limit from a refusal. Its figures are read
 * from §9's store (the day totals, shared by replicas) and the approvals (what pending ones reserve).
 */
import type { FastifyInstance } from 'fastify'
import type { ClientAccess } from '../access/client-access.js'
import type { CallerIndex } from '../callers/judge-caller.js'
import { routeCaller } from '../callers/route-caller.js'
import type { Clock } from '../clock.js'
import { ClientNotAllowedError, StateUnavailableError } from '../errors.js'
import type { StateStore } from '../state/state-store.js'
import { dayKeysToday, limitsToday } from './limits.js'

export interface LimitsRouteOptions {
  access: ClientAccess
  /** Null without a callers file: no caller has limits. */
  callers: (() => CallerIndex) | null
  state: StateStore
  /** What the caller's pending approvals reserve, as day key and units; none without approvals. */
  held: (callerId: string) => Promise<ReadonlyArray<{ key: string, units: string }>>
  clock: Clock
}

export async function limitsRoute (app: FastifyInstance, options: LimitsRouteOptions): Promise<void> {
  const { access, callers, state, held, clock } = options
  app.get('/limits', async (request, reply) => {
    void reply.header('cache-control', 'no-store')
    if (callers === null) {
      const decision = access.check(request.raw.socket.remoteAddress, request.headers)
      if (!decision.ok) throw new ClientNotAllowedError(`Refused: ${decision.reason}`)
      return { limits: [] }
    }
    const caller = routeCaller(access, callers(), request)
    const nowMs = clock.wallMs()
    const keys = dayKeysToday(caller, nowMs)
    let totals: Map<string, bigint>
    const reserved = new Map<string, bigint>()
    try {
      totals = new Map(await Promise.all(keys.map(async (key) => [key, await state.total(key)] as const)))
      for (const r of await held(caller.id)) {
        if (/^[0-9]{1,19}$/.test(r.units)) reserved.set(r.key, (reserved.get(r.key) ?? 0n) + BigInt(r.units))
      }
    } catch (err) {
      throw err instanceof StateUnavailableError ? err : new StateUnavailableError(err)
    }
    return { limits: limitsToday(caller, nowMs, totals, reserved) }
  })
}
