/**
 * What an agent gets back from a tool (SPEC §13), from the answer the inner request got: a pure
 * mapping, table-tested. `structuredContent` is `{status, body, replayed?, approval?, payment?}` and
 * the first text block the same as JSON; a 4xx or 5xx is a tool error carrying the same (the status
 * and the contract's error body); a hold is a 202 result whose second block tells the agent what to
 * do next. No response header reaches the agent: `replayed` stands for `Idempotent-Replayed` and
 * `payment` for `Payment-Id`.
 */
import type { CallToolResult } from '@modelcontextprotocol/server'
import type { ProxyError } from '../errors.js'
import { parseStrictJson } from '../json/strict-json.js'

export interface InnerAnswer {
  status: number
  headers: Readonly<Record<string, string | string[] | number | undefined>>
  body: Buffer
}

/** Always with `structuredContent`, and text blocks only. */
export type ToolResult = CallToolResult & { content: Array<{ type: 'text', text: string }>, structuredContent: Record<string, unknown> }

export type ToolOutcome = 'ok' | 'held' | 'replayed' | 'refused' | 'failed' | 'invalid_arguments'

/** A request-making tool's result. */
export function requestResult (answer: InnerAnswer): ToolResult {
  const body = bodyOf(answer)
  const structured: Record<string, unknown> = { status: answer.status, body }
  if (answer.headers['idempotent-replayed'] === 'true') structured['replayed'] = true
  const approval = heldApproval(answer, body)
  if (approval !== null) structured['approval'] = approval
  const paymentId = answer.headers['payment-id']
  if (typeof paymentId === 'string') structured['payment'] = { id: paymentId }
  const result = resultOf(structured, answer.status >= 400)
  if (approval !== null) result.content.push({ type: 'text', text: holdNotice(approval) })
  const duplicateOf = duplicateOfRefusal(answer, body)
  if (duplicateOf !== null) result.content.push({ type: 'text', text: duplicateNotice(duplicateOf) })
  return result
}

/** A look-up's result: its body as the structured content when it succeeded (`{approval}`, `{payments}`, ...). */
export function lookupResult (answer: InnerAnswer): ToolResult {
  const body = bodyOf(answer)
  if (answer.status < 400 && isRecord(body)) return resultOf(body, false)
  return resultOf({ status: answer.status, body }, true)
}

export function valueResult (value: Record<string, unknown>): ToolResult {
  return resultOf(value, false)
}

/**
 * A refusal of the proxy's own that no request got (arguments, a look-up not found): shaped as its HTTP answer would
 * be.
 */
export function errorResult (error: ProxyError): ToolResult {
  return resultOf({ status: error.statusCode, body: error.toJSON() }, true)
}

export function outcomeOf (result: ToolResult): ToolOutcome {
  const s = result.structuredContent
  if (result.isError !== true) return s['approval'] !== undefined ? 'held' : s['replayed'] === true ? 'replayed' : 'ok'
  const body = s['body']
  const code = isRecord(body) && isRecord(body['error']) ? body['error']['code'] : undefined
  if (code === 'MCP_INVALID_ARGUMENTS') return 'invalid_arguments'
  return typeof s['status'] === 'number' && s['status'] >= 500 ? 'failed' : 'refused'
}

function resultOf (structured: Record<string, unknown>, isError: boolean): ToolResult {
  const result: ToolResult = { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured }
  if (isError) result.isError = true
  return result
}

/**
 * JSON when the answer says so and reads within MAX_JSON_DEPTH; otherwise its text; null when there
 * is none. A value nested deeper would overflow the stack where the result is serialised (here and
 * in the SDK), a 500 for an answer HTTP passes through.
 */
function bodyOf (answer: InnerAnswer): unknown {
  if (answer.body.length === 0) return null
  const text = answer.body.toString('utf8')
  const type = answer.headers['content-type']
  if (typeof type === 'string' && /^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
    const read = parseStrictJson(text)
    return read.ok ? read.value : text
  }
  return text
}

/**
 * The proxy's hold (SPEC §11): a 202 that points at its approval, never a provider's 202 that happens to look alike.
 */
function heldApproval (answer: InnerAnswer, body: unknown): Record<string, unknown> | null {
  const location = answer.headers['location']
  if (answer.status !== 202 || typeof location !== 'string' || !location.startsWith('/approvals/')) return null
  return isRecord(body) && isRecord(body['approval']) ? body['approval'] : null
}

/** SPEC §16's refusal: the earlier payment it names. */
function duplicateOfRefusal (answer: InnerAnswer, body: unknown): Record<string, unknown> | null {
  if (answer.headers['x-proxy-error'] !== 'PAYMENT_PROBABLE_DUPLICATE' || !isRecord(body) || !isRecord(body['error'])) return null
  const duplicateOf = body['error']['duplicateOf']
  return isRecord(duplicateOf) ? duplicateOf : null
}

function duplicateNotice (duplicateOf: Record<string, unknown>): string {
  return `Nothing was sent: this looks like the same payout as payment ${String(duplicateOf['id'])} (state ${String(duplicateOf['state'])}), ` +
    `sent with externalReference ${JSON.stringify(duplicateOf['externalReference'])}. If you are retrying that payout (after a timeout or an error), ` +
    'send it again with that same externalReference and the same body: you get its answer, and it is never paid twice. ' +
    'Call get_payment with that reference to learn its state. Only if it is truly another payout, ask a person; do not change the reference or the amount to get around this.'
}

function holdNotice (approval: Record<string, unknown>): string {
  const id = String(approval['id'])
  const expiresAt = typeof approval['expiresAt'] === 'number' ? ` It expires at ${new Date(approval['expiresAt'] * 1000).toISOString()} if nobody decides.` : ''
  return `Nothing was sent yet: a person must approve this request first (approval ${id}).${expiresAt} ` +
    `To learn the outcome, call get_approval with {"id": "${id}"}, or repeat this same call with the same externalReference and the same body: ` +
    'while it is pending you get this answer again; once it is approved, the provider\'s answer; once it is rejected or expired, an error (APPROVAL_REJECTED or APPROVAL_EXPIRED). ' +
    'Do not change the body or use a new externalReference to get around the approval: that is a new request, held again. No tool can approve it.'
}

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
