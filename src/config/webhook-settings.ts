/**
 * `PROXY_WEBHOOK_*` (SPEC §10) -> WebhookConfig, or null when the inbox is off. Every problem names
 * its variable and rule; a secret's value is never quoted.
 */
import { checkBaseUrl } from './base-urls.js'
import { parseCidrs, parseHostPort, splitList } from './network-lists.js'
import type { RawSettings } from './schema.js'
import { readSecretVariable } from './secrets.js'
import type { ProviderVerification, WebhookConfig } from './webhook-config.js'
import { JSON_POINTER_PATTERN } from '../json/strict-json.js'

/** SPEC §10: at least 22 characters from the URL-safe alphabet (a prefix such as `wht_` counts). */
const PATH_TOKEN = /^[A-Za-z0-9_-]{22,}$/
/** The Standard Webhooks key: `whsec_` and base64 of 24 to 64 random bytes. */
const SIGNING_SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/
const MIN_SIGNING_KEY_BYTES = 24
const STEP = /^(\d+)(ms|s|m|h|d)$/
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const
const JSON_POINTER = new RegExp(JSON_POINTER_PATTERN)
const SHARED_WITH_APPROVALS = new Set(['PROXY_WEBHOOK_STORE_PATH', 'PROXY_WEBHOOK_RETRY_SCHEDULE'])
/** Payments (SPEC §12) sign their notifications with the inbox's secret and send them to its application by default. */
const SHARED_WITH_PAYMENTS = new Set([...SHARED_WITH_APPROVALS, 'PROXY_WEBHOOK_SIGNING_SECRET', 'PROXY_WEBHOOK_SIGNING_SECRET_FILE', 'PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS', 'PROXY_WEBHOOK_DELIVER_TO'])

/** `variables` are the raw ones, to tell a setting given from a schema default. */
export function resolveWebhooks (
  settings: RawSettings,
  variables: Readonly<Record<string, string | undefined>>,
  problems: string[],
  warnings: string[],
): WebhookConfig | null {
  if (settings.PROXY_WEBHOOK_LISTEN === undefined) {
    // The store path and the retry schedule also serve approvals (SPEC §11) and payments (§12), and the image sets the
    // path.
    const shared = settings.PROXY_PAYMENTS === 'on' ? SHARED_WITH_PAYMENTS : SHARED_WITH_APPROVALS
    const given = Object.keys(variables).filter((name) => name.startsWith('PROXY_WEBHOOK_') && variables[name] !== '' && !shared.has(name))
    if (given.length > 0) warnings.push(`${given.join(', ')} set but PROXY_WEBHOOK_LISTEN is not: the webhook inbox is off`)
    return null
  }
  const listen = parseListen(settings.PROXY_WEBHOOK_LISTEN, problems)
  const pathTokens = [secret(settings, 'PROXY_WEBHOOK_PATH_TOKEN', problems, true), settings.PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS]
    .filter((token): token is string => token !== undefined)
  pathTokens.forEach((token, i) => {
    if (!PATH_TOKEN.test(token)) problems.push(`${i === 0 ? 'PROXY_WEBHOOK_PATH_TOKEN' : 'PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS'} must be at least 22 characters from A-Z a-z 0-9 - _ (payments-auth-proxy webhook-secrets prints one)`)
  })
  const signing = secret(settings, 'PROXY_WEBHOOK_SIGNING_SECRET', problems, true)
  const signingSecrets = [
    signing,
    settings.PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS,
  ].filter((s): s is string => s !== undefined)
  signingSecrets.forEach((s, i) => {
    if (!isSigningSecret(s)) problems.push(`${i === 0 ? 'PROXY_WEBHOOK_SIGNING_SECRET' : 'PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS'} must be whsec_ followed by base64 of at least ${MIN_SIGNING_KEY_BYTES} bytes (payments-auth-proxy webhook-secrets prints one)`)
  })
  const allowedSources = parseCidrs(settings.PROXY_WEBHOOK_ALLOWED_SOURCES, 'PROXY_WEBHOOK_ALLOWED_SOURCES', problems)
  const trustedProxies = parseCidrs(settings.PROXY_WEBHOOK_TRUSTED_PROXIES, 'PROXY_WEBHOOK_TRUSTED_PROXIES', problems)
  const verificationHeader = settings.PROXY_WEBHOOK_VERIFY_HEADER.toLowerCase()
  const verify = resolveVerification(settings, verificationHeader, problems)
  if (verify === null && allowedSources.length === 0) {
    warnings.push('neither PROXY_WEBHOOK_VERIFY_SECRET nor PROXY_WEBHOOK_ALLOWED_SOURCES is set: the path token is the only protection of the webhook inbox')
  }
  const deliverTo = resolveDeliverTo(settings.PROXY_WEBHOOK_DELIVER_TO, problems)
  const retryScheduleMs = parseSchedule(settings.PROXY_WEBHOOK_RETRY_SCHEDULE, problems)
  return {
    listen,
    pathTokens,
    allowedSources,
    trustedProxies,
    verify,
    verificationHeader,
    bodyLimitBytes: settings.PROXY_WEBHOOK_BODY_LIMIT_BYTES,
    eventIdPointer: pointer(settings.PROXY_WEBHOOK_EVENT_ID_POINTER, 'PROXY_WEBHOOK_EVENT_ID_POINTER', problems),
    eventIdHeader: settings.PROXY_WEBHOOK_EVENT_ID_HEADER?.toLowerCase() ?? null,
    retentionS: settings.PROXY_WEBHOOK_RETENTION_SECONDS,
    deliverTo,
    signingSecrets,
    deliveryTimeoutS: settings.PROXY_WEBHOOK_DELIVERY_TIMEOUT_SECONDS,
    retryScheduleMs,
    orderKeyPointer: pointer(settings.PROXY_WEBHOOK_ORDER_KEY_POINTER, 'PROXY_WEBHOOK_ORDER_KEY_POINTER', problems),
    orderMaxWaitS: settings.PROXY_WEBHOOK_ORDER_MAX_WAIT_SECONDS,
    concurrency: settings.PROXY_WEBHOOK_CONCURRENCY,
    rateWhileProxying: settings.PROXY_WEBHOOK_RATE_WHILE_PROXYING,
    storePath: settings.PROXY_WEBHOOK_STORE_PATH,
    storeMaxEvents: settings.PROXY_WEBHOOK_STORE_MAX_EVENTS,
    storeMaxBytes: settings.PROXY_WEBHOOK_STORE_MAX_BYTES,
  }
}

function secret (settings: RawSettings, name: string, problems: string[], required: boolean): string | undefined {
  const read = readSecretVariable(settings, name)
  if (read.problem !== undefined) problems.push(read.problem)
  else if (read.value === undefined && required) problems.push(`${name} (or ${name}_FILE) is required when PROXY_WEBHOOK_LISTEN is set`)
  return read.value
}

export function isSigningSecret (text: string): boolean {
  const match = SIGNING_SECRET.exec(text)
  return match?.[1] !== undefined && Buffer.from(match[1], 'base64').length >= MIN_SIGNING_KEY_BYTES
}

function parseListen (text: string, problems: string[]): WebhookConfig['listen'] {
  const listen = parseHostPort(text)
  if (listen === null) problems.push('PROXY_WEBHOOK_LISTEN must be <IP address>:<port>, such as 0.0.0.0:8443 or [::]:8443')
  return listen ?? { host: '127.0.0.1', port: 0 }
}

function resolveVerification (settings: RawSettings, header: string, problems: string[]): ProviderVerification | null {
  const value = secret(settings, 'PROXY_WEBHOOK_VERIFY_SECRET', problems, false)
  if (value === undefined) return null
  if (settings.PROXY_WEBHOOK_VERIFY_SCHEME === 'header-secret') return { scheme: 'header-secret', header, secret: value }
  return {
    scheme: 'hmac', header, secret: value, algorithm: settings.PROXY_WEBHOOK_VERIFY_ALGORITHM, encoding: settings.PROXY_WEBHOOK_VERIFY_ENCODING, prefix: settings.PROXY_WEBHOOK_VERIFY_PREFIX,
  }
}

function resolveDeliverTo (text: string | undefined, problems: string[]): string {
  if (text === undefined) {
    problems.push('PROXY_WEBHOOK_DELIVER_TO is required when PROXY_WEBHOOK_LISTEN is set (the application\'s URL, e.g. http://127.0.0.1:3000/payments/events)')
    return ''
  }
  const checked = checkBaseUrl(text)
  if (!checked.ok) problems.push(`PROXY_WEBHOOK_DELIVER_TO ${checked.problem}`)
  return text
}

function pointer (text: string | undefined, name: string, problems: string[]): string | null {
  if (text === undefined) return null
  if (!JSON_POINTER.test(text)) problems.push(`${name} must be a JSON Pointer (RFC 6901) to a member of the body, such as /id or /data/eventId`)
  return text
}

/** `5s,5m,30m,2h` -> milliseconds; each a positive whole number with a unit (ms, s, m, h, d). */
export function parseSchedule (text: string, problems: string[], name = 'PROXY_WEBHOOK_RETRY_SCHEDULE'): number[] {
  const steps = splitList(text).map((step) => {
    const match = STEP.exec(step)
    return match === null ? Number.NaN : Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]
  })
  if (steps.length === 0 || steps.some((ms) => !(ms > 0))) {
    problems.push(`${name} must be a comma-separated list of waits such as 5s,5m,30m,2h (units ms, s, m, h, d)`)
  }
  return steps
}
