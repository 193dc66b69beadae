/**
 * The approvals' pages (SPEC §14): pending ones (oldest first, paged), decided ones (newest first),
 * one approval in full, and the decision in two steps: the person's Approve or Reject opens a page
 * that asks for confirmation, whose form decides. A decision is the one the CLI and the HTTP API
 * take (through the approvals' shared part), with `decidedByCaller` `console` and `decidedBy` the
 * person's email; the worker is nudged so that it is acted on at once. A rejection is answered once
 * the worker has given its amount back (the console is handed no state store to give it back
 * itself). Of two people deciding at once, one wins and the other is shown the approval as already
 * decided.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import { ApprovalAlreadyDecidedError, ApprovalNotFoundError, BadRequestError } from '../errors.js'
import { approvalItem } from './approval-items.js'
import type { ConsoleApproval, ConsoleApprovals } from './console-deps.js'
import { formRoute } from './form-guard.js'
import { pageNumber, pager, PAGE_SIZE, renderPage } from './render.js'

const ID = /^apr_[A-Za-z0-9_-]{1,64}$/
const MAX_REASON = 500

interface Form { decision?: unknown, reason?: unknown }

function decisionOf (body: unknown): { status: 'approved' | 'rejected', reason: string | null } {
  const form = (typeof body === 'object' && body !== null ? body : {}) as Form
  const status = form.decision === 'approve' ? 'approved' : form.decision === 'reject' ? 'rejected' : null
  if (status === null) throw new BadRequestError('the form must say approve or reject')
  if (form.reason !== undefined && typeof form.reason !== 'string') throw new BadRequestError('one reason only')
  const reason = form.reason?.trim() ?? ''
  if (reason.length > MAX_REASON) throw new BadRequestError(`a reason is at most ${MAX_REASON} characters`)
  return { status, reason: reason === '' ? null : reason }
}

export async function approvalPages (
  app: FastifyInstance,
  options: { approvals: ConsoleApprovals | null, clock: Clock, origin: string, detailPointers: readonly string[] },
): Promise<void> {
  const { approvals, clock, origin, detailPointers } = options

  app.get('/', async (_request, reply) => await reply.redirect('/approvals', 303))

  for (const [url, status, nav, title] of [['/approvals', 'pending', 'pending', 'Pending approvals'], ['/approvals/decided', 'decided', 'decided', 'Decided approvals']] as const) {
    app.get<{ Querystring: { page?: string } }>(url, async (request, reply) => {
      if (approvals === null) return await renderPage(request, reply, 'approvals', { title, nav, status, off: true, items: [], pager: pager(url, 1, 0) })
      const page = pageNumber(request.query.page)
      const nowMs = clock.wallMs()
      const found = await approvals.page({ status, offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE }, nowMs)
      const items = found.approvals.map((shown) => approvalItem(shown, nowMs, false, detailPointers))
      return await renderPage(request, reply, 'approvals', { title, nav, status, off: false, items, pager: pager(url, page, found.total) })
    })
  }

  /** The approvals, when `id` could be one of them. */
  function approvalsOf (id: string): ConsoleApprovals {
    if (approvals === null || !ID.test(id)) throw new ApprovalNotFoundError()
    return approvals
  }

  async function one (id: string, nowMs: number): Promise<ConsoleApproval> {
    const shown = await approvalsOf(id).get(id, nowMs)
    if (shown === null) throw new ApprovalNotFoundError()
    return shown
  }

  async function show (
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    notice: string | null,
    status = 200,
  ): Promise<string> {
    const nowMs = clock.wallMs()
    const item = approvalItem(await one(id, nowMs), nowMs, true, detailPointers)
    return await renderPage(request, reply, 'approval', { title: `Approval ${item.id}`, nav: item.pending ? 'pending' : 'decided', item, notice }, status)
  }

  app.get<{ Params: { id: string } }>('/approvals/:id', async (request, reply) => await show(request, reply, request.params.id, null))

  formRoute(app, origin, '/approvals/:id/review', { approversOnly: true }, async (request, reply) => {
    const id = (request.params as { id: string }).id
    const decision = decisionOf(request.body)
    const nowMs = clock.wallMs()
    const item = approvalItem(await one(id, nowMs), nowMs, true, detailPointers)
    if (!item.pending) return await show(request, reply, id, 'This approval is decided already: a decision is final.', 409)
    return await renderPage(request, reply, 'confirm', { title: `Confirm: ${decision.status === 'approved' ? 'approve' : 'reject'}`, nav: 'pending', item, decision: decision.status === 'approved' ? 'approve' : 'reject', reason: decision.reason ?? '' })
  })

  formRoute(app, origin, '/approvals/:id/decide', { approversOnly: true }, async (request, reply) => {
    const id = (request.params as { id: string }).id
    const decision = decisionOf(request.body)
    const desk = approvalsOf(id)
    const email = request.person?.email ?? ''
    try {
      const decided = await desk.decide(id, { status: decision.status, by: email, byCaller: 'console', reason: decision.reason }, clock.wallMs())
      request.log.info({ approval: decided.id, caller: decided.caller, decidedBy: email, decidedByCaller: 'console', status: decision.status }, `approval ${decision.status}`)
      desk.nudge()
      if (decision.status === 'rejected' && !await desk.givenBack(id)) {
        request.log.warn({ approval: id, caller: decided.caller, email }, 'console rejection answered before its amount was given back: the proxy has not given it back yet')
        return await show(request, reply, id, 'Rejected. Its amount is not back in the day\'s total yet: the proxy gives it back as soon as it can. If this persists, ask the operator to check the proxy\'s shared state.')
      }
      return await reply.redirect(`/approvals/${encodeURIComponent(id)}`, 303)
    } catch (err) {
      if (!(err instanceof ApprovalAlreadyDecidedError)) throw err
      request.log.info({ approval: id, email, status: decision.status }, 'console decision refused: the approval is decided already')
      return await show(request, reply, id, 'Someone else decided this approval first (or it expired): a decision is final, and yours was not taken.', 409)
    }
  })
}
