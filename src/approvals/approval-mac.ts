/**
 * The MAC an approved record carries (SPEC §11), so that write access to the store is not the power
 * to pay: the forwarder sends only a record whose MAC, under a key derived from
 * PROXY_APPROVAL_SIGNING_SECRET, covers what is sent and the decision. The key is derived (HMAC
 * with a fixed label) so the notification signatures, keyed by the same secret, never share a key.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { ApprovalRecord } from './approval-record.js'

const LABEL = 'payments-auth-proxy approval record v1'

export type MacKey = Buffer

/** `whsec_<base64>`, as the Standard Webhooks libraries read it. */
export function deriveMacKey (signingSecret: string): MacKey {
  const bytes = Buffer.from(signingSecret.replace(/^whsec_/, ''), 'base64')
  return createHmac('sha256', bytes).update(LABEL).digest()
}

type Covered = Pick<ApprovalRecord, 'id' | 'key' | 'fingerprint' | 'caller' | 'method' | 'upstreamUrl' | 'path' | 'query' | 'headers' | 'body' | 'decidedBy' | 'decidedByCaller' | 'decidedAtMs'>

export function approvalMac (key: MacKey, record: Covered): string {
  const covered = JSON.stringify(['approved', record.id, record.key, record.fingerprint, record.caller, record.method, record.upstreamUrl, record.path, record.query, record.headers, record.body.toString('base64'), record.decidedBy, record.decidedByCaller, record.decidedAtMs])
  return createHmac('sha256', key).update(covered).digest('base64url')
}

export function hasValidMac (key: MacKey, record: ApprovalRecord): boolean {
  if (record.status !== 'approved' || record.mac === null) return false
  const expected = Buffer.from(approvalMac(key, record))
  const given = Buffer.from(record.mac)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
