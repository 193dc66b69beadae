/**
 * `PROXY_PAYMENTS*` (SPEC §12) -> PaymentsConfig, or null when payments are off. Payments need §8
 * (their join key is the reference's record), a URL for their notifications and the inbox's signing
 * secret: the start names whichever is missing. Every problem names its variable; a secret's value
 * is never quoted.
 */
import { checkBaseUrl } from './base-urls.js'
import type { PaymentsConfig } from './payment-config.js'
import { splitList } from './network-lists.js'
import type { RawSettings } from './schema.js'
import { SEALING_SECRET_NAMES } from './sealing-secret.js'
import { readSecretVariable } from './secrets.js'
import { isSigningSecret, parseSchedule } from './webhook-settings.js'
import { JSON_POINTER_PATTERN } from '../json/strict-json.js'

const JSON_POINTER = new RegExp(JSON_POINTER_PATTERN)
/** A look-up path below the interface base: plain segments (SPEC §3) and whole-segment placeholders. */
const LOOKUP_SEGMENT = /^(?:[A-Za-z0-9_-]+|\{transactionId\}|\{externalReference\})$/

export function resolvePayments (
  settings: RawSettings,
  variables: Readonly<Record<string, string | undefined>>,
  sealingSecret: string | null,
  problems: string[],
  warnings: string[],
): PaymentsConfig | null {
  if (settings.PROXY_PAYMENTS !== 'on') {
    const given = Object.keys(variables).filter((name) => name.startsWith('PROXY_PAYMENTS_') && variables[name] !== '')
    if (given.length > 0) warnings.push(`${given.join(', ')} set but PROXY_PAYMENTS is not on: payments are not followed`)
    return null
  }
  if (sealingSecret === null && !problems.some((problem) => problem.includes('SEALING_SECRET'))) {
    problems.push(`PROXY_PAYMENTS=on needs ${SEALING_SECRET_NAMES}: it seals every payment record, so that no one who can write the store can settle a payment (payments-auth-proxy webhook-secrets prints one)`)
  }
  if (settings.PROXY_IDEMPOTENCY !== 'on') problems.push('PROXY_PAYMENTS=on needs PROXY_IDEMPOTENCY=on: a payment is joined to its reference\'s §8 record')
  const pointer = (name: keyof RawSettings & `PROXY_PAYMENTS_${string}_POINTER`): string => {
    const value = settings[name]
    if (value === '' || !JSON_POINTER.test(value)) problems.push(`${name} must be a JSON Pointer (RFC 6901) to a member, such as /data/transactionId`)
    return value
  }
  const statuses = (name: 'PROXY_PAYMENTS_SUCCEEDED_STATUSES' | 'PROXY_PAYMENTS_FAILED_STATUSES'): string[] => {
    const list = splitList(settings[name]).map((s) => s.toLowerCase())
    if (list.length === 0) problems.push(`${name} must list at least one status`)
    return list
  }
  const succeededStatuses = statuses('PROXY_PAYMENTS_SUCCEEDED_STATUSES')
  const failedStatuses = statuses('PROXY_PAYMENTS_FAILED_STATUSES')
  const both = succeededStatuses.filter((s) => failedStatuses.includes(s))
  if (both.length > 0) problems.push(`PROXY_PAYMENTS_SUCCEEDED_STATUSES and PROXY_PAYMENTS_FAILED_STATUSES both list ${both.join(', ')}`)
  const paths = splitList(settings.PROXY_PAYMENTS_PATHS)
  for (const path of paths) if (!path.startsWith('/')) problems.push(`PROXY_PAYMENTS_PATHS: "${path}" must start with / (a path below the interface base, * one segment, ** any)`)
  if (paths.length === 0) problems.push('PROXY_PAYMENTS_PATHS must list at least one path pattern, such as /** or /v1/payouts/**')
  const lookupScheduleMs = parseSchedule(settings.PROXY_PAYMENTS_LOOKUP_SCHEDULE, problems, 'PROXY_PAYMENTS_LOOKUP_SCHEDULE')
  if (lookupScheduleMs.some((ms, i) => i > 0 && ms <= (lookupScheduleMs[i - 1] as number))) problems.push('PROXY_PAYMENTS_LOOKUP_SCHEDULE must be increasing: each time is counted from the payment\'s creation')
  return {
    paths,
    transactionIdPointer: pointer('PROXY_PAYMENTS_TRANSACTION_ID_POINTER'),
    statusPointer: pointer('PROXY_PAYMENTS_STATUS_POINTER'),
    succeededStatuses,
    failedStatuses,
    amountPointer: pointer('PROXY_PAYMENTS_AMOUNT_POINTER'),
    currencyPointer: pointer('PROXY_PAYMENTS_CURRENCY_POINTER'),
    eventTransactionIdPointer: pointer('PROXY_PAYMENTS_EVENT_TRANSACTION_ID_POINTER'),
    eventReferencePointer: pointer('PROXY_PAYMENTS_EVENT_REFERENCE_POINTER'),
    confirm: settings.PROXY_PAYMENTS_CONFIRM,
    lookupPaths: {
      fiat: lookupPath(settings.PROXY_PAYMENTS_LOOKUP_PATH, 'PROXY_PAYMENTS_LOOKUP_PATH', problems),
      crypto: settings.PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH === undefined ? null : lookupPath(settings.PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH, 'PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH', problems),
    },
    lookupScheduleMs,
    lookupConcurrency: settings.PROXY_PAYMENTS_LOOKUP_CONCURRENCY,
    lookupsPerSecond: settings.PROXY_PAYMENTS_LOOKUPS_PER_SECOND,
    notifyUrl: notifyUrl(settings, problems),
    signingSecrets: signingSecrets(settings, problems),
    sealingSecret: sealingSecret ?? '',
    // The inbox reports a bad schedule when it is on.
    retryScheduleMs: parseSchedule(
      settings.PROXY_WEBHOOK_RETRY_SCHEDULE,
      settings.PROXY_WEBHOOK_LISTEN === undefined ? problems : [],
    ),
    retentionS: settings.PROXY_PAYMENTS_RETENTION_SECONDS,
    storePath: settings.PROXY_WEBHOOK_STORE_PATH,
  }
}

/**
 * `off` (fiat only: crypto's is simply unset) turns look-ups off; otherwise plain segments and at least one
 * placeholder.
 */
function lookupPath (text: string, name: string, problems: string[]): string | null {
  if (name === 'PROXY_PAYMENTS_LOOKUP_PATH' && text.toLowerCase() === 'off') return null
  const segments = text.split('/')
  if (segments[0] !== '' || segments.length < 2 || !segments.slice(1).every((s) => LOOKUP_SEGMENT.test(s)) || !/\{(?:transactionId|externalReference)\}/.test(text)) {
    problems.push(`${name} must be a path below the interface base whose segments are plain (A-Z a-z 0-9 - _) or one of {transactionId}, {externalReference}, with at least one of them, such as /transactions/{transactionId}`)
    return null
  }
  return text
}

function notifyUrl (settings: RawSettings, problems: string[]): string {
  const own = settings.PROXY_PAYMENTS_NOTIFY_URL
  const url = own ?? settings.PROXY_WEBHOOK_DELIVER_TO
  if (url === undefined) {
    problems.push('PROXY_PAYMENTS_NOTIFY_URL (or PROXY_WEBHOOK_DELIVER_TO) is required with PROXY_PAYMENTS=on: the application\'s URL that receives payment.succeeded, .failed and .stale')
    return ''
  }
  const checked = checkBaseUrl(url)
  // The inbox reports its own URL when it is on.
  if (!checked.ok && (own !== undefined || settings.PROXY_WEBHOOK_LISTEN === undefined)) problems.push(`${own !== undefined ? 'PROXY_PAYMENTS_NOTIFY_URL' : 'PROXY_WEBHOOK_DELIVER_TO'} ${checked.problem}`)
  return url
}

function signingSecrets (settings: RawSettings, problems: string[]): string[] {
  // With the inbox on, its own reading reports these secrets' problems.
  const report = settings.PROXY_WEBHOOK_LISTEN === undefined ? problems : []
  const read = readSecretVariable(settings, 'PROXY_WEBHOOK_SIGNING_SECRET')
  if (read.problem !== undefined) report.push(read.problem)
  else if (read.value === undefined) report.push('PROXY_WEBHOOK_SIGNING_SECRET (or _FILE) is required with PROXY_PAYMENTS=on: it signs payment notifications')
  const secrets = [
    read.value,
    settings.PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS,
  ].filter((s): s is string => s !== undefined)
  secrets.forEach((s, i) => {
    if (!isSigningSecret(s)) report.push(`${i === 0 ? 'PROXY_WEBHOOK_SIGNING_SECRET' : 'PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS'} must be whsec_ followed by base64 of at least 24 bytes (payments-auth-proxy webhook-secrets prints one)`)
  })
  return secrets
}
