/**
 * `payments-auth-proxy webhooks list|show|replay` (SPEC §10), on the same store as the sidecar,
 * whether it runs or not: SQLite in WAL mode lets the commands read and write beside it, and a
 * replayed event is picked up by the running sidecar's next look (within 2 s). Bodies are never
 * printed, only their size: they may carry personal data. Everything a sender chose (its event id in
 * the key, the order key, header names and values) goes through text/terminal-safe.ts, so a control
 * character or an escape sequence cannot move the cursor or forge a row.
 */
import { parseArgs } from 'node:util'
import type { WebhookConfig } from '../config/webhook-config.js'
import { terminalJson, terminalText } from '../text/terminal-safe.js'
import { eventView, nextAttemptCell } from '../outbox/event-view.js'
import type { EventStatus, OutboxStore } from '../outbox/outbox-store.js'
import { openStore, type OpenStoreOptions } from './open-store.js'

export const WEBHOOKS_USAGE = `usage: payments-auth-proxy webhooks list [--status pending|delivered|failed] [--since <ISO time>] [--json]
       payments-auth-proxy webhooks show <id>
       payments-auth-proxy webhooks replay <id>... | --failed [--since <ISO time>]`

export interface CommandIo { out: (text: string) => void, err: (text: string) => void, nowMs: () => number }

const STATUSES: readonly string[] = ['pending', 'delivered', 'failed']

/** Returns the exit code: 0 done, 1 something asked for was not found, 2 usage. */
export async function runWebhooksCommand (
  args: readonly string[],
  settings: WebhookConfig,
  options: OpenStoreOptions,
  io: CommandIo,
): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: [...args], allowPositionals: true, options: { status: { type: 'string' }, since: { type: 'string' }, json: { type: 'boolean' }, failed: { type: 'boolean' } } })
  } catch (err) {
    io.err(`${(err as Error).message}\n${WEBHOOKS_USAGE}\n`)
    return 2
  }
  const [verb, ...ids] = parsed.positionals
  const { status, since, json, failed } = parsed.values
  const sinceMs = since === undefined ? 0 : Date.parse(since)
  if (Number.isNaN(sinceMs) || (status !== undefined && !STATUSES.includes(status)) || verb === undefined || !['list', 'show', 'replay'].includes(verb)) {
    io.err(`${WEBHOOKS_USAGE}\n`)
    return 2
  }
  const store = await openStore(settings, options)
  const orderMaxWaitMs = settings.orderMaxWaitS * 1000
  try {
    if (verb === 'list') return await list(store, { status: status as EventStatus | undefined, sinceMs, limit: 1_000_000 }, json === true, orderMaxWaitMs, io)
    if (verb === 'show') return await show(store, ids, orderMaxWaitMs, io)
    return await replay(store, ids, failed === true ? sinceMs : null, io)
  } finally {
    await store.close()
  }
}

async function list (
  store: OutboxStore,
  query: { status: EventStatus | undefined, sinceMs: number, limit: number },
  json: boolean,
  orderMaxWaitMs: number,
  io: CommandIo,
): Promise<number> {
  const events = await store.list(query.status === undefined ? { sinceMs: query.sinceMs, limit: query.limit } : query)
  const nowMs = io.nowMs()
  if (json) {
    for (const e of events) io.out(`${terminalJson(eventView(e, nowMs, orderMaxWaitMs))}\n`)
    return 0
  }
  io.out('id\tstatus\tattempts\tthis round\treceived\tnext attempt\tkey\tbytes\n')
  for (const e of events) {
    const v = eventView(e, nowMs, orderMaxWaitMs)
    const cells = [
      v.id,
      v.status,
      String(v.attempts),
      String(v.attemptsThisRound),
      v.receivedAt,
      nextAttemptCell(v),
      v.key,
      String(v.bytes),
    ]
    io.out(`${cells.map(terminalText).join('\t')}\n`)
  }
  return 0
}

async function show (
  store: OutboxStore,
  ids: readonly string[],
  orderMaxWaitMs: number,
  io: CommandIo,
): Promise<number> {
  if (ids.length !== 1) {
    io.err(`${WEBHOOKS_USAGE}\n`)
    return 2
  }
  const found = await store.show(ids[0] ?? '')
  if (found === null) {
    io.err(`no event ${terminalText(ids[0] ?? '')}\n`)
    return 1
  }
  const { event, waitingBehind } = found
  const view = eventView(
    { ...event, bytes: event.body.length, attemptsTotal: found.attempts.length, waitingBehind },
    io.nowMs(),
    orderMaxWaitMs,
  )
  // `attempts` lists every attempt recorded: as many as a listing counts.
  const attempts = found.attempts.map((a) => ({
    at: new Date(a.atMs).toISOString(),
    status: a.status,
    error: a.error,
    durationMs: a.durationMs,
  }))
  io.out(`${terminalJson({ ...view, headers: event.headers, attempts }, 2)}\n`)
  return 0
}

async function replay (
  store: OutboxStore,
  ids: readonly string[],
  failedSinceMs: number | null,
  io: CommandIo,
): Promise<number> {
  if ((failedSinceMs === null) === (ids.length === 0)) {
    io.err(`${WEBHOOKS_USAGE}\n`)
    return 2
  }
  const replayed = await store.replay(failedSinceMs === null ? { ids } : { failedSinceMs }, io.nowMs())
  for (const id of replayed) io.out(`replayed ${terminalText(id)}\n`)
  const missing = ids.filter((id) => !replayed.includes(id))
  for (const id of missing) io.err(`no event ${terminalText(id)}\n`)
  if (failedSinceMs !== null) io.out(`${replayed.length} failed events back to pending\n`)
  return missing.length > 0 ? 1 : 0
}
