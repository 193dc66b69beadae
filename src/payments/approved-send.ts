/**
 * The approvals forwarder's side of the follow hook (SPEC §11 -> §12): "a request held by §11 is
 * followed once it is forwarded after the approval (its caller is the agent that sent it)". Before
 * the stored request is sent, `followApproved` stores its intent (or joins the reference's record,
 * as a resend after a crash does), rejecting when it cannot, so that nothing is sent unrecorded;
 * after it, `approvedAnswered` applies the provider's answer and gives the `Payment-Id` header to
 * record with it, so the agent's retry replays it. A held request that is rejected or expires is
 * never sent, and so creates nothing.
 */
import { HeldJson } from '../json/held-json.js'
import { PAYMENT_ID } from '../objects/payment-id.js'
import { foldPath, type CanonicalPath } from '../routing/canonical-path.js'
import { PAYMENT_ID_HEADER } from './payment-follow-plugin.js'
import type { FollowedSend, PaymentFollower, SendFacts } from './payment-follower.js'

/** What a followed forward is known by (SendFacts), as approvals held and sent it: the body as bytes. */
export interface ApprovedSend extends Pick<SendFacts, 'key' | 'caller' | 'environment' | 'interface' | 'method' | 'path'> {
  externalReference: string
  body: Buffer
  /** What the hold reserved against day totals: the payment gives it back once if it fails (SPEC §16). */
  reservations: ReadonlyArray<{ key: string, units: string }>
  /** The id the duplicate check planned for this payout when it was held (SPEC §16). */
  paymentId?: string | undefined
}

/** The answer as the approvals forwarder read it. */
export interface ApprovedAnswer { status: number, body: Buffer, headers: Record<string, string | string[] | undefined> }

/**
 * The approvals forwarder's follow hook (server.ts hands it over): stores the intent of a followed
 * send, rejecting when it cannot, and resolves what to do with its answer.
 */
export function approvedSendFollower (
  follower: PaymentFollower,
): (send: ApprovedSend) => Promise<(answer: ApprovedAnswer | null) => Promise<Record<string, string>>> {
  return async (send) => {
    const sent = await followApproved(follower, send)
    return async (answer) => await approvedAnswered(follower, sent, answer)
  }
}

/** Null when this request is not followed. */
async function followApproved (follower: PaymentFollower, send: ApprovedSend): Promise<FollowedSend | null> {
  const folded = foldPath(send.path as CanonicalPath)
  if (!follower.follows(send.method, folded)) return null
  return await follower.intent({
    key: send.key,
    caller: send.caller,
    environment: send.environment,
    interface: send.interface,
    method: send.method,
    path: send.path,
    folded,
    reference: send.externalReference,
    body: new HeldJson(send.body),
    counted: send.reservations,
    ...(send.paymentId !== undefined && PAYMENT_ID.test(send.paymentId) ? { id: send.paymentId } : {}),
  })
}

/** `answer` null: none came. Resolves the headers to record with the answer (none when the record was dropped). */
async function approvedAnswered (
  follower: PaymentFollower,
  sent: FollowedSend | null,
  answer: ApprovedAnswer | null,
): Promise<Record<string, string>> {
  if (sent === null) return {}
  const read = answer === null ? { kind: 'lost' as const } : follower.read(answer.status, answer.body, answer.headers['content-encoding'])
  await follower.answered(sent, read)
  return sent.fresh && (read.kind === 'refused' || read.kind === 'untracked') ? {} : { [PAYMENT_ID_HEADER]: sent.id }
}
