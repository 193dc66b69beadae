/**
 * What a person is shown of an approval (SPEC §14): always the object the record verifier gives
 * (a record whose seals do not verify is rejected, never pending), spelled for a page. Pure.
 */
import { parseStrictJson, readPointer } from '../json/strict-json.js'
import type { ApprovalView } from '../objects/approval-object.js'
import type { ConsoleApproval } from './console-deps.js'
import { groupedAmount, shownBody, shownText, shownTime, span, stateInWords, type ShownBody, type ShownText, type ShownTime } from './display.js'

export interface ApprovalItem {
  id: string
  status: ApprovalView['status']
  pending: boolean
  caller: ShownText
  environment: string
  /** The body's members at PROXY_CONSOLE_DETAIL_POINTERS that are present, labelled by the pointer's last name. */
  details: Array<{ label: string, value: ShownText }>
  target: ShownText
  amount: string
  currency: ShownText
  reference: ShownText
  body: ShownBody
  held: ShownTime
  age: string
  expires: ShownTime
  expiresIn: string
  decidedBy: ShownText | null
  decidedByCaller: string | null
  decidedAt: ShownTime | null
  reason: ShownText | null
  /** For an approved one: whether the held request is still to be sent, being sent, or answered. */
  forward: 'waiting' | 'sending' | 'answered' | null
  /** SPEC §16: held as a probable duplicate of this earlier payment, shown beside it. */
  duplicateOf: { id: string, reference: ShownText, state: string, created: ShownTime } | null
}

/**
 * The members at `pointers` a person reads first (a recipient, a narration): strings and numbers as sent, never an
 * object; a body that is not one strict JSON value shows none.
 */
export function detailLines (body: string, pointers: readonly string[]): ApprovalItem['details'] {
  const read = parseStrictJson(body, { numbers: 'text' })
  if (!read.ok || read.hasDuplicates) return []
  return pointers.flatMap((pointer) => {
    const found = readPointer(read.value, pointer)
    if (found.kind !== 'found' || (typeof found.value !== 'string' && typeof found.value !== 'number')) return []
    const label = (pointer.split('/').at(-1) ?? '').replace(/~1/g, '/').replace(/~0/g, '~')
    return [{ label: shownText(label, 64).text, value: shownText(String(found.value), 200) }]
  })
}

/** `detail`: the approval's own page shows more of what callers chose than a list does. */
export function approvalItem (
  { record, view }: ConsoleApproval,
  nowMs: number,
  detail: boolean,
  pointers: readonly string[] = [],
): ApprovalItem {
  const cut = detail ? 400 : 64
  return {
    id: view.id,
    status: view.status,
    pending: view.status === 'pending',
    caller: shownText(view.caller, 64),
    environment: view.environment,
    details: detailLines(view.request, pointers),
    // The query too: it is sent, so it is shown (it is under the record's seal like the rest).
    target: shownText(`${view.method} /${view.environment}/${view.interface}${view.path}${record.query === '' ? '' : `?${record.query}`}`, detail ? 600 : 160),
    amount: groupedAmount(view.amount),
    currency: shownText(view.currency, 12),
    reference: shownText(view.externalReference, cut),
    body: shownBody(view.request),
    held: shownTime(record.createdAtMs),
    age: span(nowMs - record.createdAtMs),
    expires: shownTime(view.expiresAt * 1000),
    expiresIn: span(view.expiresAt * 1000 - nowMs),
    decidedBy: view.decidedBy === undefined ? null : shownText(view.decidedBy, 254),
    decidedByCaller: view.decidedByCaller ?? null,
    decidedAt: record.decidedAtMs === null || view.decidedBy === undefined ? null : shownTime(record.decidedAtMs),
    reason: view.reason === undefined ? null : shownText(view.reason, 500),
    forward: view.status !== 'approved' ? null : record.forward === 'none' ? 'waiting' : record.forward,
    duplicateOf: view.duplicateOf === undefined
      ? null
      : {
          id: view.duplicateOf.id,
          reference: shownText(view.duplicateOf.externalReference, cut),
          state: stateInWords(view.duplicateOf.state),
          created: shownTime(view.duplicateOf.createdAt * 1000),
        },
  }
}
