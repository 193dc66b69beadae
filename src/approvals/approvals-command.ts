/**
 * `payments-auth-proxy approvals list|show|approve|reject` (SPEC §11), on the same store as the
 * sidecar, whether it runs or not: a decision taken here is acted on by a running sidecar within
 * 2 s (its worker looks once a second), or at its next start. `decidedByCaller` is `cli`. A rejection
 * is printed once its amount is back in the day's total (give-back.ts): given back here through
 * Redis, or, with the totals in the sidecar's memory, by the running sidecar, waited for up to 5 s.
 *
 * Every record is verified with this configuration's PROXY_APPROVAL_SEALING_SECRET before it is
 * shown or decided: one that does not verify is shown as rejected, and deciding it writes nothing
 * and exits 1, so a command run with another secret than the sidecar's can never strand a payment.
 * What callers chose (references, reasons, bodies) is printed with control characters escaped.
 */
import { parseArgs } from 'node:util'
import type { Logger } from 'pino'
import { systemClock } from '../clock.js'
import type { Config } from '../config/config.js'
import { ProxyError } from '../errors.js'
import { createStore } from '../state/create-store.js'
import type { Storage } from '../storage/storage.js'
import { waitFor } from '../storage/wait-for.js'
import { terminalJson, terminalText } from '../text/terminal-safe.js'
import { APPROVAL_STATUSES, type ApprovalStatus } from '../objects/approval-object.js'
import { type ApprovalRecord } from './approval-record.js'
import { deriveSealKey, sealFailure } from './approval-seal.js'
import type { ApprovalStore } from './approval-store.js'
import { decideApproval } from './decide-approval.js'
import { cliGivesBack, GIVE_BACK_WAIT_MS, waitGivenBack } from './give-back.js'
import { openApprovalStore } from './open-approval-store.js'
import { createRecordVerifier, type RecordVerifier } from './record-verifier.js'
import { releaseReservations } from './release-reservations.js'

export const APPROVALS_USAGE = `usage: payments-auth-proxy approvals list [--status pending|approved|rejected|expired] [--json]
       payments-auth-proxy approvals show <id>
       payments-auth-proxy approvals approve <id> --by <name> [--reason <text>]
       payments-auth-proxy approvals reject <id> --by <name> [--reason <text>]`

export interface CommandIo { out: (text: string) => void, err: (text: string) => void, nowMs: () => number }

type Verb = 'list' | 'show' | 'approve' | 'reject'

/** What is wrong with the command line, in a sentence, or null. */
function usageProblem (
  verb: string | undefined,
  id: string | undefined,
  values: { status?: string | undefined, by?: string | undefined },
): string | null {
  if (verb === undefined || !['list', 'show', 'approve', 'reject'].includes(verb)) return verb === undefined ? 'say what to do' : `unknown command: ${terminalText(verb)}`
  if (verb === 'list') return values.status === undefined || APPROVAL_STATUSES.includes(values.status as ApprovalStatus) ? null : `--status must be one of ${APPROVAL_STATUSES.join(', ')}`
  if (id === undefined) return `${verb} needs the approval's id`
  if (verb !== 'show' && (values.by === undefined || values.by.trim() === '')) return `${verb} needs --by <name>: who decides (recorded as decidedBy)`
  return null
}

/** Returns the exit code: 0 done, 1 not found, already decided or not verifiable, 2 usage or configuration. */
export async function runApprovalsCommand (args: readonly string[], config: Pick<Config, 'approvals' | 'state'>, deps: { log: Logger, storage: Storage }, io: CommandIo): Promise<number> {
  const { log, storage } = deps
  let parsed
  try {
    parsed = parseArgs({ args: [...args], allowPositionals: true, options: { status: { type: 'string' }, json: { type: 'boolean' }, by: { type: 'string' }, reason: { type: 'string' } } })
  } catch (err) {
    io.err(`payments-auth-proxy: ${terminalText((err as Error).message)}\n${APPROVALS_USAGE}\n`)
    return 2
  }
  const [verb, id] = parsed.positionals
  const { status, json, by, reason } = parsed.values
  const problem = usageProblem(verb, id, { status, by })
  if (problem !== null) {
    io.err(`payments-auth-proxy: ${problem}\n${APPROVALS_USAGE}\n`)
    return 2
  }
  const secret = config.approvals.sealingSecret
  if (secret === null) {
    io.err('payments-auth-proxy: PROXY_APPROVAL_SEALING_SECRET (or _FILE) is required, the same as the sidecar\'s: approvals are shown and decided only once their seals verify\n')
    return 2
  }
  const verifier = createRecordVerifier(deriveSealKey(secret), log, null)
  const store = await openApprovalStore(config, storage, log)
  try {
    if (verb === 'list') return await list(store, verifier, status as ApprovalStatus | undefined, json === true, io)
    if (verb === 'show') return await show(store, verifier, id as string, io)
    return await decide({ store, verifier, config, log, storage, io }, verb as Extract<Verb, 'approve' | 'reject'>, id as string, { by: by as string, reason: reason ?? null })
  } finally {
    await store.close()
  }
}

async function list (
  store: ApprovalStore,
  verifier: RecordVerifier,
  status: ApprovalStatus | undefined,
  json: boolean,
  io: CommandIo,
): Promise<number> {
  const nowMs = io.nowMs()
  const views = (await store.list()).map((a) => verifier.view(a, nowMs)).filter(
    (a) => status === undefined || a.status === status,
  )
  if (json) {
    for (const view of views) io.out(`${terminalJson(view)}\n`)
    return 0
  }
  io.out('id\tstatus\tcaller\tamount\treference\texpires\tdecided by\n')
  for (const a of views) {
    const cells = [a.id, a.status, a.caller, `${a.amount} ${a.currency}`, a.externalReference, new Date(a.expiresAt * 1000).toISOString(), a.decidedBy ?? (a.reason === undefined ? '-' : `- (${a.reason})`)]
    io.out(`${cells.map(terminalText).join('\t')}\n`)
  }
  return 0
}

async function show (store: ApprovalStore, verifier: RecordVerifier, id: string, io: CommandIo): Promise<number> {
  const approval = await store.get(id)
  if (approval === null) {
    io.err(`payments-auth-proxy: no approval ${terminalText(id)}\n`)
    return 1
  }
  // The query a held request carries is sent with it, so a person reading it here sees it too.
  const view = verifier.view(approval, io.nowMs())
  io.out(`${terminalJson(approval.query === '' ? view : { ...view, query: approval.query }, 2)}\n`)
  return 0
}

interface DecideContext { store: ApprovalStore, verifier: RecordVerifier, config: Pick<Config, 'state'>, log: Logger, storage: Storage, io: CommandIo }

async function decide (context: DecideContext, verb: 'approve' | 'reject', id: string, decision: { by: string, reason: string | null }): Promise<number> {
  const { store, verifier, io } = context
  // Checked here first, with this command's secret: a mismatch writes nothing (decideApproval refuses it too).
  const current = await store.get(id)
  if (current !== null && sealFailure(verifier.key, current) !== null) {
    io.err(`payments-auth-proxy: approval ${terminalText(id)} does not verify with this PROXY_APPROVAL_SEALING_SECRET: either it is not the sidecar's, or the record was changed in the store. Nothing was written.\n`)
    return 1
  }
  try {
    const decided = await decideApproval(store, verifier, id, { status: verb === 'approve' ? 'approved' : 'rejected', by: decision.by, byCaller: 'cli', reason: decision.reason }, io.nowMs())
    const notBack = decided.status === 'rejected' ? await giveBack(context, decided) : null
    io.out(`${terminalJson(verifier.view(decided, io.nowMs()), 2)}\n`)
    // The rejection is taken and final (exit 0); what is said is that its amount is not back yet.
    if (notBack !== null) io.err(`payments-auth-proxy: ${notBack}\n`)
    return 0
  } catch (err) {
    if (!(err instanceof ProxyError)) throw err
    io.err(`payments-auth-proxy: ${err.code}: ${terminalText(err.message)}\n`)
    return 1
  }
}

/** Null once the rejection's amount is back in the day's total, else what the person is told. */
async function giveBack (context: DecideContext, decided: ApprovalRecord): Promise<string | null> {
  if (cliGivesBack(context.config) === 'sidecar') {
    if (await waitGivenBack(context.store, decided.id, GIVE_BACK_WAIT_MS)) return null
    return `no running sidecar gave the amount of ${terminalText(decided.id)} back to the day's total within ${GIVE_BACK_WAIT_MS / 1000} s (the day totals live in its memory, without PROXY_REDIS_URL); the next start of the sidecar gives it back`
  }
  const state = await createStore({ clock: systemClock, log: context.log, storage: context.storage })
  try {
    // The connection is made in the background and a command before it is refused: waited for, within the same bound.
    await waitFor(() => state.status().ready, GIVE_BACK_WAIT_MS)
    if (state.status().ready && await releaseReservations(state, decided, context.log)) return null
    return `the amount of ${terminalText(decided.id)} could not be given back to the day's total now (Redis did not answer); a running sidecar gives it back once Redis answers`
  } finally {
    await state.close()
  }
}
