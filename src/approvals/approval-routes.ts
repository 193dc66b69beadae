/**
 * The approvals over HTTP on the proxy listener (SPEC §11): `GET /approvals?status=`, `GET
 * /approvals/<id>`, `POST /approvals/<id>/approve|reject` with `{"by", "reason"}`. Every request
 * identifies its caller by key, as proxied requests do (§7), and passes the client rules (§5).
 * Approvers (`approver: true`, whatever their `allow` rules) list and decide, never their own
 * requests; any caller sees its own approvals, and another's is 404 to it, as if it did not exist.
 * A rejection is answered once its amount is back in the day's total (give-back.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ClientAccess } from '../access/client-access.js'
import type { CallerSpec } from '../callers/callers-file.js'
import type { CallerIndex } from '../callers/judge-caller.js'
import { routeCaller } from '../callers/route-caller.js'
import type { Clock } from '../clock.js'
import {
  ApprovalNotFoundError,
  ApprovalNotPermittedError,
  ApprovalSelfDecisionError,
  BadRequestError,
  StateUnavailableError,
} from '../errors.js'
import { parseStrictJsonBytes } from '../json/strict-json.js'
import type { StateStore } from '../state/state-store.js'
import type { ApprovalMetrics } from './approval-metrics.js'
import { APPROVAL_STATUSES, type ApprovalStatus } from '../objects/approval-object.js'
import type { ApprovalStore } from './approval-store.js'
import { visibleApproval, visibleApprovals } from './approval-visibility.js'
import { decideApproval } from './decide-approval.js'
import type { RecordVerifier } from './record-verifier.js'
import { releaseReservations } from './release-reservations.js'

export interface ApprovalRoutesOptions {
  callers: () => CallerIndex
  access: ClientAccess
  store: ApprovalStore
  clock: Clock
  verifier: RecordVerifier
  metrics: ApprovalMetrics
  /** The day totals a rejection gives its amounts back to before it is answered (give-back.ts). */
  state: StateStore
  /** Tells the worker to act on a decision now. */
  decided: () => void
}

const MAX_TEXT = 500
const DECISION_SHAPE = 'send the decision as a JSON object, {"by": "<your name>", "reason": "<optional text>"}, with any Content-Type'

/** The decision's body, read once as JSON whatever its Content-Type claims; empty is `{}`. */
function decisionBody (raw: unknown): Record<string, unknown> {
  if (!Buffer.isBuffer(raw) || raw.length === 0) return {}
  const read = parseStrictJsonBytes(raw)
  // A repeated name ({"by": "Ann", "by": "Eve"}) has no one reading: refused like bad JSON.
  if (!read.ok || read.hasDuplicates || typeof read.value !== 'object' || read.value === null || Array.isArray(read.value)) throw new BadRequestError(DECISION_SHAPE)
  return read.value
}

function decisionText (value: unknown, field: string, required: boolean): string | null {
  if (value === undefined && !required) return null
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_TEXT) throw new BadRequestError(`"${field}" must be a non-empty string of at most ${MAX_TEXT} characters`)
  return value
}

export async function approvalRoutes (app: FastifyInstance, options: ApprovalRoutesOptions): Promise<void> {
  const { store, clock, metrics, verifier } = options
  // As the proxy routes do: a decision is JSON whatever its Content-Type says (curl -d sends
  // application/x-www-form-urlencoded, the docs' own example among them), or says nothing.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(['application/json', '*'], { parseAs: 'buffer' }, (_request, body, done) => { done(null, body) })

  const callerOf = (request: FastifyRequest): CallerSpec => routeCaller(options.access, options.callers(), request)

  async function approvalFor (caller: CallerSpec, id: string): Promise<NonNullable<Awaited<ReturnType<ApprovalStore['get']>>>> {
    const approval = await visibleApproval(store, caller, id)
    if (approval === null) throw new ApprovalNotFoundError()
    return approval
  }

  app.get<{ Querystring: { status?: string } }>('/approvals', async (request) => {
    const caller = callerOf(request)
    if (!caller.approver) throw new ApprovalNotPermittedError(caller.id)
    const status = request.query.status
    if (status !== undefined && !APPROVAL_STATUSES.includes(status as ApprovalStatus)) throw new BadRequestError(`status must be one of ${APPROVAL_STATUSES.join(', ')}`)
    return {
      approvals: await visibleApprovals(store, verifier, caller, status as ApprovalStatus | undefined, clock.wallMs()),
    }
  })

  app.get<{ Params: { id: string } }>('/approvals/:id', async (request) => {
    const approval = await approvalFor(callerOf(request), request.params.id)
    return { approval: verifier.view(approval, clock.wallMs()) }
  })

  for (const [verb, status] of [['approve', 'approved'], ['reject', 'rejected']] as const) {
    app.post<{ Params: { id: string }, Body: unknown }>(`/approvals/:id/${verb}`, async (request) => {
      const caller = callerOf(request)
      if (!caller.approver) throw new ApprovalNotPermittedError(caller.id)
      const approval = await approvalFor(caller, request.params.id)
      if (approval.caller === caller.id) throw new ApprovalSelfDecisionError()
      const body = decisionBody(request.body)
      const by = decisionText(body.by, 'by', true) as string
      const reason = decisionText(body.reason, 'reason', false)
      const decided = await decideApproval(
        store,
        verifier,
        approval.id,
        { status, by, byCaller: caller.id, reason },
        clock.wallMs(),
      )
      request.log.info({ approval: decided.id, caller: decided.caller, decidedBy: by, decidedByCaller: caller.id, status }, `approval ${status}`)
      metrics.step(decided.caller, status)
      // Under the names the worker gives back with (release-reservations.ts): whichever of the two,
      // or of the replicas, comes first gives the amount back, the other gives back nothing.
      const givenBack = status === 'approved' || await releaseReservations(options.state, decided, request.log)
      options.decided()
      // The rejection stands and the worker keeps trying; what cannot be said is that the amount is back.
      if (!givenBack) throw new StateUnavailableError(new Error(`approval ${decided.id} is rejected, its amount not yet given back`))
      return { approval: verifier.view(decided, clock.wallMs()) }
    })
  }
}
