/**
 * The inbox's pages (SPEC §14): failed and pending events with their attempts, one event with every
 * attempt, and replay (the `webhooks replay` of SPEC §10: back to pending with a fresh schedule and
 * the same `webhook-id`; the deliverer is woken, so it is delivered at once). Only the store's
 * contract is used. Bodies are never shown, only their size, as the CLI does: they may carry
 * personal data.
 */
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.js'
import { BadRequestError, RouteNotFoundError } from '../errors.js'
import type { ConsoleEventSummary, ConsoleInbox } from './console-deps.js'
import { shownText, shownTime, type ShownText, type ShownTime } from './display.js'
import { formRoute } from './form-guard.js'
import { PAGE_SIZE, renderPage } from './render.js'

const ID = /^msg_[A-Za-z0-9_-]{1,64}$/

type EventStatus = ConsoleEventSummary['status']

export interface EventItem {
  id: string
  status: EventStatus
  attempts: number
  received: ShownTime
  next: ShownTime | null
  key: ShownText
  bytes: number
  conflictWith: string | null
}

function eventItem (e: ConsoleEventSummary): EventItem {
  return {
    id: e.id,
    status: e.status,
    attempts: e.attempts,
    received: shownTime(e.receivedAtMs),
    next: e.status === 'pending' ? shownTime(e.nextAttemptAtMs) : null,
    key: shownText(e.key, 64),
    bytes: e.bytes,
    conflictWith: e.conflictWith,
  }
}

/** `since` from the query: the time (Unix ms) of the first event of a later page. */
function sinceOf (text: unknown): number {
  return typeof text === 'string' && /^[0-9]{1,15}$/.test(text) ? Number(text) : 0
}

export async function eventPages (
  app: FastifyInstance,
  options: { inbox: ConsoleInbox | null, clock: Clock, origin: string },
): Promise<void> {
  const { inbox, clock, origin } = options

  /**
   * A section of one status from `sinceMs` on, and where the next page starts (the first event not shown, by its time).
   */
  async function section (status: 'pending' | 'failed', sinceMs: number): Promise<{ items: EventItem[], nextSince: number | null }> {
    if (inbox === null) return { items: [], nextSince: null }
    const found = await inbox.store.list({ status, sinceMs, limit: PAGE_SIZE + 1 })
    const next = found[PAGE_SIZE]
    return { items: found.slice(0, PAGE_SIZE).map(eventItem), nextSince: next === undefined ? null : next.receivedAtMs }
  }

  app.get<{ Querystring: { failedSince?: string, pendingSince?: string } }>('/events', async (request, reply) => {
    const [failed, pending] = await Promise.all([section('failed', sinceOf(request.query.failedSince)), section('pending', sinceOf(request.query.pendingSince))])
    return await renderPage(request, reply, 'events', { title: 'Webhook events', nav: 'events', off: inbox === null, failed, pending })
  })

  app.get<{ Params: { id: string } }>('/events/:id', async (request, reply) => {
    const found = inbox === null || !ID.test(request.params.id) ? null : await inbox.store.show(request.params.id)
    if (found === null) throw new RouteNotFoundError()
    const { event, attempts } = found
    const item = eventItem({ ...event, bytes: event.body.length })
    const headers = event.headers.map(([name, value]) => ({ name: shownText(name, 100), value: shownText(value, 400) }))
    const tries = attempts.map((a) => ({
      at: shownTime(a.atMs),
      status: a.status,
      error: a.error === null ? null : shownText(a.error, 200),
      durationMs: a.durationMs,
    }))
    return await renderPage(request, reply, 'event', { title: `Event ${item.id}`, nav: 'events', item, headers, attempts: tries, source: shownText(event.source, 64) })
  })

  formRoute(app, origin, '/events/:id/replay', { approversOnly: true }, async (request, reply) => {
    const id = (request.params as { id: string }).id
    if (inbox === null || !ID.test(id)) throw new RouteNotFoundError()
    const replayed = await inbox.store.replay({ ids: [id] }, clock.wallMs())
    if (replayed.length === 0) throw new BadRequestError('no such event')
    request.log.info({ event: id, email: request.person?.email }, 'webhook event replayed from the console')
    inbox.wake()
    return await reply.redirect(`/events/${encodeURIComponent(id)}`, 303)
  })
}
