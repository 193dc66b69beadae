/**
 * `PROXY_APPROVAL_*` (SPEC §11) -> Config['approvals']. The signing and sealing secrets are optional
 * here: they are required only when the callers file uses `approveAbove`, which server.ts checks
 * once it has read the file. Their values are never quoted in a problem.
 */
import type { Config } from './config.js'
import type { RawSettings } from './schema.js'
import { checkBaseUrl } from './base-urls.js'
import { whsecSecret } from './sealing-secret.js'
import { parseSchedule } from './webhook-settings.js'

export function resolveApprovals (settings: RawSettings, sealingSecret: string | null, problems: string[]): Config['approvals'] {
  const signingSecret = whsecSecret(settings, 'PROXY_APPROVAL_SIGNING_SECRET', problems)
  const notifyUrl = settings.PROXY_APPROVAL_NOTIFY_URL ?? null
  if (notifyUrl !== null) {
    const checked = checkBaseUrl(notifyUrl)
    if (!checked.ok) problems.push(`PROXY_APPROVAL_NOTIFY_URL ${checked.problem}`)
  }
  // The inbox reports a bad schedule when it is on; approvals report it otherwise, once.
  const scheduleProblems: string[] = []
  const retryScheduleMs = parseSchedule(settings.PROXY_WEBHOOK_RETRY_SCHEDULE, scheduleProblems)
  if (notifyUrl !== null && settings.PROXY_WEBHOOK_LISTEN === undefined) problems.push(...scheduleProblems)
  return {
    ttlS: settings.PROXY_APPROVAL_TTL_SECONDS,
    notifyUrl,
    retryScheduleMs,
    signingSecret,
    sealingSecret,
    // SPEC §11: approvals live in the inbox's embedded store, whether or not the inbox is on.
    storePath: settings.PROXY_WEBHOOK_STORE_PATH,
  }
}
