/** A stored approval with every field set, for the store tests to vary. */
import type { ApprovalRecord } from '../../src/approvals/approval-record.js'

export function approvalFixture (overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: 'apr_1',
    key: 'k1',
    fingerprint: 'f1',
    status: 'pending',
    caller: 'payout-agent',
    environment: 'sandbox',
    interface: 'fiat',
    method: 'POST',
    path: '/payouts',
    upstreamUrl: 'http://127.0.0.1:1/api/b2b',
    query: '',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"amount":"500","currency":"KES","externalReference":"r1"}'),
    amount: '500',
    currency: 'KES',
    externalReference: 'r1',
    createdAtMs: 1_000,
    expiresAtMs: 100_000,
    reservations: [{ key: 'day:payout-agent:0:KES:0', units: '50000000000' }],
    decidedBy: null,
    decidedByCaller: null,
    reason: null,
    decidedAtMs: null,
    forward: 'none',
    holdSeal: 'hold-seal',
    decisionSeal: null,
    forwardSeal: null,
    ...overrides,
  }
}
