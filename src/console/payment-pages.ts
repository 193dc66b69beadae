/**
 * The payments pages (SPEC §14 over §12), registered only when the payments capability is handed
 * in: the payments a person must look at (unverified, stale and unknown, with their total), every
 * payment or those of one state a page at a time, a search by reference, payment id or transaction
 * id that opens the payment's own page, that page, and `payments recheck`'s action on one (a
 * look-up within 2 s; a stale one pending again on a fresh schedule). An unverified one (its record
 * failed its seals) shows only what its seals vouch for, and no recheck: only a look-up of its
 * sealed transaction id, which the sidecar makes, settles it.
 */
import type { FastifyInstance } from 'fastify'
import { RouteNotFoundError } from '../errors.js'
import { PAYMENT_STATE_NAMES, type ConsolePayment, type ConsolePayments, type PaymentStateName } from './console-deps.js'
import { groupedAmount, shownText, shownTime, stateInWords } from './display.js'
import { formRoute } from './form-guard.js'
import { pageNumber, pager, PAGE_SIZE, renderPage } from './render.js'

const ID = /^pay_[A-Za-z0-9_-]{1,64}$/
/** A search is a reference, an id or a transaction id: longer text names no payment a person typed. */
const SEARCH_MAX = 200
/** Pages of every payment are read newest first from the start: older ones are found by their reference. */
const BROWSE_PAGES = 40
const RECHECKABLE = new Set(['pending', 'stale', 'unknown'])

function paymentItem (p: ConsolePayment): Record<string, unknown> {
  return {
    id: p.id,
    state: p.state,
    stateWords: stateInWords(p.state),
    providerStatus: p.providerStatus === null ? null : shownText(p.providerStatus, 64),
    caller: p.caller === null ? null : shownText(p.caller, 64),
    environment: p.environment,
    target: p.method === null ? null : shownText(`${p.method} /${p.environment ?? ''}/${p.interface ?? ''}${p.path ?? ''}`, 160),
    unverified: p.state === 'unverified',
    reference: shownText(p.externalReference, 64),
    transactionId: p.transactionId === null ? null : shownText(p.transactionId, 64),
    amount: p.amount === null ? null : groupedAmount(p.amount),
    currency: p.currency === null ? null : shownText(p.currency, 12),
    created: p.createdAt === null ? null : shownTime(p.createdAt * 1000),
    settled: p.settledAt == null ? null : shownTime(p.settledAt * 1000),
    settledBy: p.settledBy ?? null,
    confirmed: p.confirmed === true,
    recheckable: RECHECKABLE.has(p.state),
    events: (p.events ?? []).map((e) => ({
      id: e.id,
      status: e.status === null ? null : shownText(e.status, 64),
      received: shownTime(e.receivedAt * 1000),
      disputed: e.disputed,
    })),
    lookups: p.lookups?.count ?? null,
    lastLookup: p.lookups?.lastAt == null ? null : shownTime(p.lookups.lastAt * 1000),
    lastOutcome: p.lookups?.lastOutcome ?? null,
    nextLookup: p.lookups?.nextAt == null ? null : shownTime(p.lookups.nextAt * 1000),
  }
}

function stateFilter (text: unknown): PaymentStateName | 'all' | null {
  if (text === 'all') return 'all'
  return PAYMENT_STATE_NAMES.find((name) => name === text) ?? null
}

export async function paymentPages (
  app: FastifyInstance,
  options: { payments: ConsolePayments, origin: string },
): Promise<void> {
  const { payments, origin } = options
  const filters = ['all', ...PAYMENT_STATE_NAMES].map((name) => ({ name, href: `/payments?state=${name}` }))

  app.get<{ Querystring: { page?: string, state?: string } }>('/payments', async (request, reply) => {
    const page = pageNumber(request.query.page)
    const state = stateFilter(request.query.state)
    if (state === null) {
      const found = await payments.list({ states: ['unverified', 'stale', 'unknown'], offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE })
      return await renderPage(request, reply, 'payments', {
        title: 'Unverified, stale and unknown payments',
        nav: 'payments',
        filters,
        filter: null,
        items: found.payments.map(paymentItem),
        pager: pager('/payments', page, found.total),
        browse: null,
      })
    }
    const shown = Math.min(page, BROWSE_PAGES)
    const found = await payments.browse({ state: state === 'all' ? null : state, offset: (shown - 1) * PAGE_SIZE, limit: PAGE_SIZE })
    const path = `/payments?state=${state}&page=`
    return await renderPage(request, reply, 'payments', {
      title: state === 'all' ? 'Every payment' : `Payments ${stateInWords(state)}`,
      nav: 'payments',
      filters,
      filter: state,
      items: found.payments.map(paymentItem),
      pager: null,
      browse: {
        page: shown,
        previous: shown > 1 ? `${path}${shown - 1}` : null,
        next: found.more && shown < BROWSE_PAGES ? `${path}${shown + 1}` : null,
        last: found.more && shown === BROWSE_PAGES,
      },
    })
  })

  app.get<{ Querystring: { q?: string } }>('/payments/find', async (request, reply) => {
    const q = typeof request.query.q === 'string' ? request.query.q.trim() : ''
    if (q === '') return await reply.redirect('/payments', 303)
    const found = q.length > SEARCH_MAX ? [] : await payments.find(q)
    const only = found.length === 1 ? found[0] : undefined
    if (only !== undefined) return await reply.redirect(`/payments/${only.id}`, 303)
    return await renderPage(request, reply, 'payments-found', {
      title: 'Find a payment',
      nav: 'payments',
      query: shownText(q, 80),
      items: found.map(paymentItem),
    }, found.length === 0 ? 404 : 200)
  })

  app.get<{ Params: { id: string } }>('/payments/:id', async (request, reply) => {
    const id = request.params.id
    const payment = ID.test(id) ? await payments.get(id) : null
    if (payment === null) throw new RouteNotFoundError()
    const item = paymentItem(payment)
    return await renderPage(request, reply, 'payment', { title: `Payment ${shownText(payment.externalReference, 64).text}`, nav: 'payments', item })
  })

  formRoute(app, origin, '/payments/:id/recheck', { approversOnly: true }, async (request, reply) => {
    const id = (request.params as { id: string }).id
    const payment = ID.test(id) ? await payments.recheck(id) : null
    if (payment === null) throw new RouteNotFoundError()
    request.log.info({ payment: id, email: request.person?.email }, 'payment recheck from the console')
    return await reply.redirect(`/payments/${id}`, 303)
  })
}
