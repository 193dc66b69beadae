/**
 * `payments-auth-proxy check` for approvals (SPEC §6, §11), when a caller uses approveAbove: what
 * would stop the start (the signing secret, idempotency off), and whether the approvals' store can
 * be reached: Redis answers, or the embedded file opens and its directory takes new files (tried:
 * sqlite/store-path.ts). No record is written, so check run beside a live sidecar leaves its
 * approvals alone, and a file not there yet is not created (the sidecar does that at its start).
 */
import type { Logger } from 'pino'
import type { CallerSpec } from '../callers/callers-file.js'
import type { Config } from '../config/config.js'
import { judgeStorePath } from '../sqlite/store-path.js'
import { askRedis, redisProblem, type RedisAnswer } from '../state/check-store.js'
import type { Storage } from '../storage/storage.js'
import { checkApprovalStart } from './approval-start-checks.js'

export interface ApprovalStoreCheck { ok: boolean, lines: string[] }

/** `redis` is the check's one question to PROXY_REDIS_URL (state/check-store.ts), asked here when not given. */
export async function checkApprovals (config: Pick<Config, 'approvals' | 'state' | 'idempotency'>, callers: readonly CallerSpec[], deps: { log: Logger, storage: Storage }, redis?: Promise<RedisAnswer>): Promise<ApprovalStoreCheck> {
  const { log, storage } = deps
  const start = checkApprovalStart(callers, config)
  if (!start.used) return { ok: true, lines: ['skip  approvals store: no caller uses approveAbove'] }
  const lines = [...start.problems.map((p) => `FAIL  approvals: ${p}`), ...start.warnings.map((w) => `warn  approvals: ${w}`)]
  const url = config.state.redisUrl
  const store = url !== null
    ? await checkRedis(config, { log, storage }, redis ?? askRedis(url, log))
    : await checkFile(config.approvals.storePath)
  lines.push(store.line)
  return { ok: start.problems.length === 0 && store.ok, lines }
}

async function checkRedis (config: Pick<Config, 'approvals'>, { log, storage }: { log: Logger, storage: Storage }, redis: Promise<RedisAnswer>): Promise<{ ok: boolean, line: string }> {
  const answer = await redis
  // The store's own client is made only once Redis has answered: it would wait and log again.
  if (answer.kind !== 'answers') return { ok: false, line: `FAIL  approvals store: ${redisProblem(answer)}` }
  const { openApprovalStore } = await import('./open-approval-store.js')
  const store = await openApprovalStore(config, storage, log)
  try {
    return { ok: true, line: `ok    approvals store: Redis answers, ${(await store.list('pending')).length} pending` }
  } catch (err) {
    return { ok: false, line: `FAIL  approvals store: Redis did not answer the read of the approvals (${(err as { code?: string }).code ?? (err as Error).name})` }
  } finally {
    await store.close()
  }
}

async function checkFile (path: string): Promise<{ ok: boolean, line: string }> {
  const judged = judgeStorePath(path)
  if (judged.kind === 'refused') return { ok: false, line: `FAIL  approvals store: ${judged.problem} (PROXY_WEBHOOK_STORE_PATH)` }
  if (judged.kind === 'creatable') return { ok: true, line: `ok    approvals store: ${path} is created at the sidecar's start (${judged.dir} is writable)` }
  try {
    const pending = await countPending(path)
    return { ok: true, line: `ok    approvals store: ${path} opens, ${pending} pending` }
  } catch (err) {
    return { ok: false, line: `FAIL  approvals store: ${path} cannot be read as an SQLite database (${(err as { code?: string }).code ?? 'error'}; PROXY_WEBHOOK_STORE_PATH)` }
  }
}

async function countPending (path: string): Promise<number> {
  const { openDatabase } = await import('../sqlite/open-database.js')
  const db = await openDatabase(path)
  try {
    // The file may be the inbox's alone so far: the approvals' table is created at the sidecar's start.
    if (db.prepare('SELECT 1 FROM sqlite_master WHERE type = \'table\' AND name = \'approvals\'').get() === undefined) return 0
    return (db.prepare('SELECT count(*) AS n FROM approvals WHERE status = \'pending\'').get() as { n: number }).n
  } finally {
    db.close()
  }
}
