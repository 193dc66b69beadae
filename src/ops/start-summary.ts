/**
 * The one line at start that says what is on besides the proxy (SPEC §7, §10, §11): the callers
 * file and how many callers it holds, approvals and where they are kept, the webhook inbox and its
 * address. Never a secret: no key, no token, no Redis URL (it may hold a password).
 */
import type { CallerIndex } from '../callers/judge-caller.js'
import type { Config } from '../config/config.js'

export interface StartFeatures {
  callersFile: string | null
  callers: number | null
  /** Where held requests are kept, when a caller uses approveAbove. */
  approvals: 'sqlite' | 'redis' | null
  /** The inbox's listen address, when PROXY_WEBHOOK_LISTEN is set. */
  webhookInbox: string | null
  stateStore: 'redis' | 'memory'
}

export function startSummary (config: Pick<Config, 'callers' | 'webhooks' | 'state'>, callers: CallerIndex | null, approvalsOn: boolean): { fields: StartFeatures, msg: string } {
  const redis = config.state.redisUrl !== null
  const listen = config.webhooks?.listen
  const fields: StartFeatures = {
    callersFile: config.callers.file,
    callers: callers === null ? null : callers.all.length,
    approvals: approvalsOn ? (redis ? 'redis' : 'sqlite') : null,
    webhookInbox: listen === undefined ? null : `${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${listen.port}`,
    stateStore: redis ? 'redis' : 'memory',
  }
  const count = fields.callers ?? 0
  const on = [
    fields.callersFile === null ? null : `callers file (${count} ${count === 1 ? 'caller' : 'callers'})`,
    fields.approvals === null ? null : `approvals (${fields.approvals === 'redis' ? 'Redis' : 'SQLite'})`,
    fields.webhookInbox === null ? null : `webhook inbox (${fields.webhookInbox})`,
  ].filter((part) => part !== null)
  return { fields, msg: `features: ${on.length === 0 ? 'none (no callers file, approvals or webhook inbox)' : on.join(', ')}` }
}
