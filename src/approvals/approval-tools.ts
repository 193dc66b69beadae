/**
 * Approvals' tools for agents over MCP (SPEC §13): `get_approval` and `list_approvals`, read through
 * the visibility the HTTP routes use (approval-visibility.ts). No tool decides an approval: a person
 * does, over HTTP, the CLI or the console.
 */
import type { Clock } from '../clock.js'
import { ApprovalNotFoundError } from '../errors.js'
import type { FeatureTool } from '../feature/feature-tools.js'
import { APPROVAL_STATUSES, type ApprovalStatus } from '../objects/approval-object.js'
import type { ApprovalStore } from './approval-store.js'
import { visibleApproval, visibleApprovals } from './approval-visibility.js'
import type { RecordVerifier } from './record-verifier.js'

export function approvalTools (
  approvals: { store: ApprovalStore, verifier: RecordVerifier, clock: Clock },
): FeatureTool[] {
  const { store, verifier, clock } = approvals
  return [{
    listing: {
      name: 'get_approval',
      title: 'Look up an approval',
      description: 'Tells whether a person has decided a request of yours that was held for approval (a result with status 202 and an approval). status is pending, approved, rejected or expired; once approved, repeat the original call with the same externalReference and body to get the provider\'s answer. You see your own approvals only. This tool cannot approve or reject anything: a person decides.',
      inputSchema: { type: 'object', properties: { id: { type: 'string', maxLength: 100, description: 'the approval id, apr_...' } }, required: ['id'], additionalProperties: false },
      annotations: { readOnlyHint: true },
    },
    async call (caller, args) {
      const approval = await visibleApproval(store, caller, String(args['id']))
      if (approval === null) throw new ApprovalNotFoundError()
      return { value: { approval: verifier.view(approval, clock.wallMs()) } }
    },
  }, {
    listing: {
      name: 'list_approvals',
      title: 'List approvals',
      description: 'Lists the approvals of your requests (an approver\'s: every caller\'s), optionally only those with one status. Listing decides nothing: a person approves or rejects.',
      inputSchema: { type: 'object', properties: { status: { enum: [...APPROVAL_STATUSES], description: 'only approvals with this status' } }, additionalProperties: false },
      annotations: { readOnlyHint: true },
    },
    async call (caller, args) {
      // The schema admitted only APPROVAL_STATUSES.
      return { value: { approvals: await visibleApprovals(store, verifier, caller, args['status'] as ApprovalStatus | undefined, clock.wallMs()) } }
    },
  }]
}
