/**
 * `payments-auth-proxy webhooks list|show|replay` (SPEC §10), on the same store as the sidecar,
 * whether it runs or not: SQLite in WAL mode lets the commands read and write beside it, and a
 * replayed event is picked up by the running sidecar's next look (within 2 s). Bodies are never
 * printed, only their size: they may carry personal data.
 */
import { parseArgs } from 'node:util'
import type { WebhookConfig } from '../config/webhook-config.js'
import type { EventStatus, EventSummary, InboxStore } from './inbox-store.js'
import { openStore, type OpenStoreOptions } from './open-store.js'

export const WEBHOOKS_USAGE = `usage: payments-auth-proxy webhooks list [--status pending|delivered|failed] [--since <ISO time>] [--json]
       payments-auth-proxy webhooks show <id>
       payments-auth-proxy webhooks replay <id>... | --failed [--since <ISO time>]`

export interface CommandIo { out: (text: string) => void, err: (text: string) => void, nowMs: () => number }

const STATUSES: readonly string[] = ['pending', 'delivered', 'failed']

/** Returns the exit code: 0 done, 1 something asked for was not found, 2 usage. */
export async function runWebhooksCommand (args: readonly string[], settings: WebhookConfig, options: OpenStoreOptions, io: CommandIo): Promise<number> {
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
  try {
    if (verb === 'list') return await list(store, { status: status as EventStatus | undefined, sinceMs, limit: 1_000_000 }, json === true, io)
    if (verb === 'show') return await show(store, ids, io)
    return await replay(store, ids, failed === true ? sinceMs : null, io)
  } finally {
    await store.close()
  }
}

async function list (store: InboxStore, query: { status: EventStatus | undefined, sinceMs: number, limit: number }, json: boolean, io: CommandIo): Promise<number> {
  const events = await store.list(query.status === undefined ? { sinceMs: query.sinceMs, limit: query.limit } : query)
  if (json) {
    for (const e of events) io.out(`${JSON.stringify(summary(e))}\n`)
    return 0
  }
  io.out('id\tstatus\tattempts\treceived\tnext attempt\tkey\tbytes\n')
  for (const e of events) {
    const s = summary(e)
    io.out(`${s.id}\t${s.status}\t${s.attempts}\t${s.receivedAt}\t${s.nextAttemptAt ?? '-'}\t${s.key}\t${s.bytes}\n`)
  }
  return 0
}

function summary (e: EventSummary): Record<string, unknown> & { id: string, status: string, attempts: number, receivedAt: string, nextAttemptAt: string | null, key: string, bytes: number } {
  return {
    id: e.id,
    status: e.status,
    attempts: e.attempts,
    receivedAt: new Date(e.receivedAtMs).toISOString(),
    nextAttemptAt: e.status === 'pending' ? new Date(e.nextAttemptAtMs).toISOString() : null,
    key: e.key,
    orderKey: e.orderKey,
    conflictWith: e.conflictWith,
    source: e.source,
    bytes: e.bytes,
  }
}

async function show (store: InboxStore, ids: readonly string[], io: CommandIo): Promise<number> {
  if (ids.length !== 1) {
    io.err(`${WEBHOOKS_USAGE}\n`)
    return 2
  }
  const found = await store.show(ids[0] ?? '')
  if (found === null) {
    io.err(`no event ${ids[0] ?? ''}\n`)
    return 1
  }
  const attempts = found.attempts.map((a) => ({ at: new Date(a.atMs).toISOString(), status: a.status, error: a.error, durationMs: a.durationMs }))
  io.out(`${JSON.stringify({ ...summary({ ...found.event, bytes: found.event.body.length }), headers: found.event.headers, attempts }, null, 2)}\n`)
  return 0
}

async function replay (store: InboxStore, ids: readonly string[], failedSinceMs: number | null, io: CommandIo): Promise<number> {
  if ((failedSinceMs === null) === (ids.length === 0)) {
    io.err(`${WEBHOOKS_USAGE}\n`)
    return 2
  }
  const replayed = await store.replay(failedSinceMs === null ? { ids } : { failedSinceMs }, io.nowMs())
  for (const id of replayed) io.out(`replayed ${id}\n`)
  const missing = ids.filter((id) => !replayed.includes(id))
  for (const id of missing) io.err(`no event ${id}\n`)
  if (failedSinceMs !== null) io.out(`${replayed.length} failed events back to pending\n`)
  return missing.length > 0 ? 1 : 0
}
