/**
 * The payments a person must look at, with recheck (SPEC §14, over §12), registered only when the
 * payments capability is handed in: a page of unverified, stale and unknown payments, newest first,
 * and `payments recheck`'s action on one (a look-up within 2 s; a stale one pending again on a fresh
 * schedule). An unverified one (its record failed its seals) shows only what its seals vouch for,
 * and no recheck: only a look-up of its sealed transaction id, which the sidecar makes, settles it.
 */
import type { FastifyInstance } from 'fastify'
import { RouteNotFoundError } from '../errors.js'
import type { ConsolePayment, ConsolePayments } from './console-deps.js'
import { groupedAmount, shownText, shownTime } from './display.js'
import { formRoute } from './form-guard.js'
import { pageNumber, pager, PAGE_SIZE, renderPage } from './render.js'

const ID = /^pay_[A-Za-z0-9_-]{1,64}$/

function paymentItem (p: ConsolePayment): Record<string, unknown> {
  return {
    id: p.id,
    state: p.state,
    providerStatus: p.providerStatus === null ? null : shownText(p.providerStatus, 64),
    caller: p.caller === null ? null : shownText(p.caller, 64),
    target: p.method === null ? null : shownText(`${p.method} /${p.environment ?? ''}/${p.interface ?? ''}${p.path ?? ''}`, 160),
    unverified: p.state === 'unverified',
    reference: shownText(p.externalReference, 64),
    transactionId: p.transactionId === null ? null : shownText(p.transactionId, 64),
    amount: p.amount === null ? null : groupedAmount(p.amount),
    currency: p.currency === null ? null : shownText(p.currency, 12),
    created: p.createdAt === null ? null : shownTime(p.createdAt * 1000),
    lookups: p.lookups?.count ?? null,
    lastLookup: p.lookups?.lastAt == null ? null : shownTime(p.lookups.lastAt * 1000),
    lastOutcome: p.lookups?.lastOutcome ?? null,
    nextLookup: p.lookups?.nextAt == null ? null : shownTime(p.lookups.nextAt * 1000),
  }
}

export async function paymentPages (
  app: FastifyInstance,
  options: { payments: ConsolePayments, origin: string },
): Promise<void> {
  const { payments, origin } = options

  app.get<{ Querystring: { page?: string } }>('/payments', async (request, reply) => {
    const page = pageNumber(request.query.page)
    const found = await payments.list({ states: ['unverified', 'stale', 'unknown'], offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE })
    return await renderPage(request, reply, 'payments', { title: 'Unverified, stale and unknown payments', nav: 'payments', items: found.payments.map(paymentItem), pager: pager('/payments', page, found.total) })
  })

  formRoute(app, origin, '/payments/:id/recheck', { approversOnly: true }, async (request, reply) => {
    const id = (request.params as { id: string }).id
    const payment = ID.test(id) ? await payments.recheck(id) : null
    if (payment === null) throw new RouteNotFoundError()
    request.log.info({ payment: id, email: request.person?.email }, 'payment recheck from the console')
    return await reply.redirect('/payments', 303)
  })
}
