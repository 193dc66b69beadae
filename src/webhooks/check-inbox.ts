/**
 * `payments-auth-proxy check` for the webhook inbox (SPEC §6, §10), when PROXY_WEBHOOK_LISTEN is set:
 * what `serve` needs of it, one line each. Its listen address (free, and not the proxy's own port),
 * the path token and the signing secret (how many, never their values), and the store: the SQLite
 * file opens (counting its events) or can be created, or Redis answered the check's one question,
 * with `appendonly no` a warning (an event answered 200 could be lost). A file not there yet is not
 * created; an existing one is opened as the `webhooks` commands open it.
 */
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import type { WebhookConfig } from '../config/webhook-config.js'
import { INBOX_LISTEN, listenReport, sharePort } from '../http/listen-check.js'
import { judgeStorePath } from '../sqlite/store-path.js'
import type { OutboxStore } from '../outbox/outbox-store.js'
import type { Storage } from '../storage/storage.js'
import { openStore } from './open-store.js'

export interface InboxCheck { ok: boolean, lines: string[] }

/**
 * What the check's one question to PROXY_REDIS_URL found (check.ts hands it on): Redis
 * answers, or the words the store's line says.
 */
export type RedisFinding = { answers: true, appendOnly: boolean | null } | { answers: false, problem: string }

interface Line { ok: boolean, line: string }

/** `redis`: what Redis answered the check, null without PROXY_REDIS_URL (the store is then the SQLite file). */
export async function checkInbox (settings: WebhookConfig, config: Pick<Config, 'listen'>, deps: { log: Logger, storage: Storage }, redis: Promise<RedisFinding> | null): Promise<InboxCheck> {
  const { log, storage } = deps
  const lines = [
    await checkListen(settings, config.listen),
    pathTokens(settings),
    signingSecrets(settings),
    redis === null ? await checkFile(settings, storage, log) : await checkRedis(settings, storage, log, redis),
  ]
  return { ok: lines.every((l) => l.ok), lines: lines.map((l) => l.line) }
}

async function checkListen (settings: WebhookConfig, proxy: Config['listen']): Promise<Line> {
  const { host, port } = settings.listen
  // Both free now, but the proxy listens first and the inbox's listen would then fail.
  if (sharePort(settings.listen, proxy)) return { ok: false, line: `FAIL  webhook inbox listen: ${host}:${port} is the port of the proxy's own listener ${proxy.host}:${proxy.port} (PROXY_WEBHOOK_LISTEN, PROXY_HOST, PROXY_PORT)` }
  return await listenReport('webhook inbox listen', settings.listen, INBOX_LISTEN)
}

function pathTokens (settings: WebhookConfig): Line {
  const [current, previous] = settings.pathTokens
  const also = previous === undefined ? '' : '; PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS is accepted too, until removed'
  return { ok: true, line: `ok    webhook path token: ${current?.length ?? 0} characters (PROXY_WEBHOOK_PATH_TOKEN)${also}` }
}

function signingSecrets (settings: WebhookConfig): Line {
  const [current, previous] = settings.signingSecrets
  const bytes = Buffer.from((current ?? '').slice('whsec_'.length), 'base64').length
  const also = previous === undefined ? '' : '; PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS signs deliveries too, until removed'
  return { ok: true, line: `ok    webhook signing secret: a ${bytes}-byte key (PROXY_WEBHOOK_SIGNING_SECRET)${also}` }
}

async function checkFile (settings: WebhookConfig, storage: Storage, log: Logger): Promise<Line> {
  const path = settings.storePath
  const judged = judgeStorePath(path)
  if (judged.kind === 'refused') return { ok: false, line: `FAIL  webhook store: ${judged.problem} (PROXY_WEBHOOK_STORE_PATH)` }
  if (judged.kind === 'creatable') return { ok: true, line: `ok    webhook store: ${path} is created at the sidecar's start (${judged.dir} is writable)` }
  const counted = await counts(settings, storage, log)
  if (!counted.ok) return { ok: false, line: `FAIL  webhook store: ${counted.problem}` }
  return { ok: true, line: `ok    webhook store: ${path} opens, ${counted.text}` }
}

async function checkRedis (
  settings: WebhookConfig,
  storage: Storage,
  log: Logger,
  redis: Promise<RedisFinding>,
): Promise<Line> {
  const answer = await redis
  if (!answer.answers) return { ok: false, line: `FAIL  webhook store: ${answer.problem}` }
  const counted = await counts(settings, storage, log)
  if (!counted.ok) return { ok: false, line: `FAIL  webhook store: Redis answered, but not the read of the events (${counted.problem})` }
  if (answer.appendOnly === false) return { ok: true, line: `warn  webhook store: Redis answers (${counted.text}), but runs without append-only persistence (appendonly no): events answered 200 can be lost if Redis restarts` }
  return { ok: true, line: `ok    webhook store: Redis answers, ${counted.text}` }
}

/** "N pending, M failed" from the store, opened as the commands open it; or why it could not be read. */
async function counts (
  settings: WebhookConfig,
  storage: Storage,
  log: Logger,
): Promise<{ ok: true, text: string } | { ok: false, problem: string }> {
  let store: OutboxStore
  try {
    // Its client's warnings (a reconnect, appendonly) would repeat what the line says.
    store = await openStore(settings, { storage, log: log.child({}, { level: 'error' }) })
  } catch (err) {
    // open-store.ts's one sentence, naming PROXY_WEBHOOK_STORE_PATH (a file that is not a database).
    return { ok: false, problem: (err as Error).message }
  }
  try {
    const { pending, failed } = await store.stats()
    return { ok: true, text: `${pending} pending, ${failed} failed` }
  } catch (err) {
    return { ok: false, problem: (err as { code?: string }).code ?? (err as Error).name }
  } finally {
    await store.close()
  }
}
