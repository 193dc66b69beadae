/**
 * `payments-auth-proxy approvals list|show|approve|reject` (SPEC §11), on the same store as the
 * sidecar, whether it runs or not: a decision taken here is acted on by a running sidecar within
 * 2 s (its worker looks once a second), or at its next start. `decidedByCaller` is `cli`.
 */
import { parseArgs } from 'node:util'
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import { ProxyError } from '../errors.js'
import { deriveMacKey } from './approval-mac.js'
import { APPROVAL_STATUSES, type ApprovalStatus } from './approval-record.js'
import type { ApprovalStore } from './approval-store.js'
import { approvalView } from './approval-view.js'
import { decideApproval } from './decide-approval.js'
import { openApprovalStore } from './open-approval-store.js'

export const APPROVALS_USAGE = `usage: payments-auth-proxy approvals list [--status pending|approved|rejected|expired] [--json]
       payments-auth-proxy approvals show <id>
       payments-auth-proxy approvals approve <id> --by <name> [--reason <text>]
       payments-auth-proxy approvals reject <id> --by <name> [--reason <text>]`

export interface CommandIo { out: (text: string) => void, err: (text: string) => void, nowMs: () => number }

/** Returns the exit code: 0 done, 1 not found or already decided, 2 usage or configuration. */
export async function runApprovalsCommand (args: readonly string[], config: Pick<Config, 'approvals' | 'state'>, log: Logger, io: CommandIo): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: [...args], allowPositionals: true, options: { status: { type: 'string' }, json: { type: 'boolean' }, by: { type: 'string' }, reason: { type: 'string' } } })
  } catch (err) {
    io.err(`${(err as Error).message}\n${APPROVALS_USAGE}\n`)
    return 2
  }
  const [verb, id] = parsed.positionals
  const { status, json, by, reason } = parsed.values
  const deciding = verb === 'approve' || verb === 'reject'
  const usable = (verb === 'list' && (status === undefined || APPROVAL_STATUSES.includes(status as ApprovalStatus))) ||
    (verb === 'show' && id !== undefined) || (deciding && id !== undefined && by !== undefined && by.trim() !== '')
  if (!usable) {
    io.err(`${APPROVALS_USAGE}\n`)
    return 2
  }
  const secret = config.approvals.signingSecret
  if (deciding && secret === null) {
    io.err('payments-auth-proxy: PROXY_APPROVAL_SIGNING_SECRET (or _FILE) is required to decide: the sidecar sends only approvals sealed with it\n')
    return 2
  }
  const store = await openApprovalStore(config, log)
  try {
    if (verb === 'list') return await list(store, status as ApprovalStatus | undefined, json === true, io)
    if (verb === 'show') return await show(store, id as string, io)
    try {
      const decided = await decideApproval(store, deriveMacKey(secret as string), id as string, { status: verb === 'approve' ? 'approved' : 'rejected', by: by as string, byCaller: 'cli', reason: reason ?? null }, io.nowMs())
      io.out(`${JSON.stringify(approvalView(decided, io.nowMs()))}\n`)
      return 0
    } catch (err) {
      if (!(err instanceof ProxyError)) throw err
      io.err(`payments-auth-proxy: ${err.code}: ${err.message}\n`)
      return 1
    }
  } finally {
    await store.close()
  }
}

async function list (store: ApprovalStore, status: ApprovalStatus | undefined, json: boolean, io: CommandIo): Promise<number> {
  const nowMs = io.nowMs()
  const views = (await store.list()).map((a) => approvalView(a, nowMs)).filter((a) => status === undefined || a.status === status)
  if (json) {
    for (const view of views) io.out(`${JSON.stringify(view)}\n`)
    return 0
  }
  io.out('id\tstatus\tcaller\tamount\treference\texpires\tdecided by\n')
  for (const a of views) io.out(`${a.id}\t${a.status}\t${a.caller}\t${a.amount} ${a.currency}\t${a.externalReference}\t${new Date(a.expiresAt * 1000).toISOString()}\t${a.decidedBy ?? '-'}\n`)
  return 0
}

async function show (store: ApprovalStore, id: string, io: CommandIo): Promise<number> {
  const approval = await store.get(id)
  if (approval === null) {
    io.err(`payments-auth-proxy: no approval ${id}\n`)
    return 1
  }
  io.out(`${JSON.stringify(approvalView(approval, io.nowMs()), null, 2)}\n`)
  return 0
}
