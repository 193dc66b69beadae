/**
 * Asking about payments on the proxy listener (SPEC §12): `GET /payments/<reference>` -> the
 * caller's most recent payment with that reference (`?environment=` narrows it; a payment's own id
 * is taken too), and `GET /payments?state=&limit=` -> newest first. A caller sees its own payments;
 * approvers (§11) see all; without a callers file the anonymous caller sees all. Another caller's
 * payment is 404 PAYMENT_NOT_FOUND, as if it did not exist. Identity and the client rules are the
 * proxied requests' (§5, §7), through `identify`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { BadRequestError, PaymentNotFoundError, StateUnavailableError } from '../errors.js'
import { ENVIRONMENTS } from '../config/config.js'
import { PAYMENT_STATES, type PaymentRecord, type PaymentState } from './payment-record.js'
import type { PaymentStore } from './payment-store.js'
import { paymentView } from './payment-view.js'
import { PAYMENT_ID } from '../objects/payment-id.js'

export const DEFAULT_LIST_LIMIT = 100
export const MAX_LIST_LIMIT = 1000

export interface Asker {
  id: string
  /** Sees every caller's payments. */
  seesAll: boolean
}

export interface PaymentRoutesOptions {
  store: PaymentStore
  /** The caller of a request, or throws its refusal (CLIENT_NOT_ALLOWED, CALLER_UNAUTHENTICATED). */
  identify: (request: FastifyRequest) => Asker
}

export async function paymentRoutes (app: FastifyInstance, options: PaymentRoutesOptions): Promise<void> {
  const { store, identify } = options

  /** The store that cannot answer is the shared state being unavailable (SPEC §9): 503, never a 500. */
  async function read<T> (reading: Promise<T>): Promise<T> {
    try {
      return await reading
    } catch (err) {
      throw new StateUnavailableError(err)
    }
  }

  async function find (asker: Asker, text: string, environment: string | undefined): Promise<PaymentRecord> {
    const caller = asker.seesAll ? undefined : asker.id
    const byId = PAYMENT_ID.test(text) ? await read(store.get(text)) : null
    const visible = (r: PaymentRecord | null): r is PaymentRecord => r !== null &&
      (caller === undefined || r.caller === caller) &&
      (environment === undefined || r.environment === environment)
    if (visible(byId)) return byId
    const byReference = await read(store.byReference(text, { caller, environment }))
    if (byReference === null) throw new PaymentNotFoundError()
    return byReference
  }

  app.get<{ Params: { reference: string }, Querystring: { environment?: string } }>('/payments/:reference', async (request) => {
    const asker = identify(request)
    const environment = request.query.environment
    if (environment !== undefined && !(ENVIRONMENTS as readonly string[]).includes(environment)) throw new BadRequestError(`environment must be one of ${ENVIRONMENTS.join(', ')}`)
    return { payment: paymentView(await find(asker, request.params.reference, environment)) }
  })

  app.get<{ Querystring: { state?: string, limit?: string } }>('/payments', async (request) => {
    const asker = identify(request)
    const { state, limit } = request.query
    if (state !== undefined && !PAYMENT_STATES.includes(state as PaymentState)) throw new BadRequestError(`state must be one of ${PAYMENT_STATES.join(', ')}`)
    const count = limit === undefined ? DEFAULT_LIST_LIMIT : /^[1-9][0-9]{0,3}$/.test(limit) ? Number(limit) : NaN
    if (!(count <= MAX_LIST_LIMIT)) throw new BadRequestError(`limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`)
    const payments = await read(
      store.list({
        state: state as PaymentState | undefined,
        caller: asker.seesAll ? undefined : asker.id,
        limit: count,
      }),
    )
    return { payments: payments.map(paymentView) }
  })
}
