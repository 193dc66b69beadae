/**
 * SPEC §11: the approvals' two secrets are refused when equal to any other secret of the
 * configuration, in any spelling of the same key bytes. The sealing key must be one that no
 * notification receiver holds, and the approvals' signing key one that cannot sign payment events
 * to the application. A `whsec_` secret has many spellings of one key (with or without its prefix
 * or padding, either base64 alphabet, the unused low bits of its last character), so each secret is
 * compared by every reading of it the code could make: its text, and its base64 decoding.
 */
import { readSecretVariable } from './secrets.js'

/** Every secret of the configuration, by variable (`_FILE` forms read as the variables are). */
const ALL_SECRETS = [
  'PAYMENTS_PRODUCTION_API_KEY', 'PAYMENTS_PRODUCTION_PUBLIC_KEY', 'PAYMENTS_SANDBOX_API_KEY', 'PAYMENTS_SANDBOX_PUBLIC_KEY',
  'PROXY_WEBHOOK_PATH_TOKEN', 'PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS', 'PROXY_WEBHOOK_VERIFY_SECRET',
  'PROXY_WEBHOOK_SIGNING_SECRET', 'PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS',
  'PROXY_APPROVAL_SIGNING_SECRET', 'PROXY_APPROVAL_SEALING_SECRET', 'PROXY_SEALING_SECRET',
] as const

/** The secrets that must differ from every other. */
const MUST_BE_DISTINCT = ['PROXY_SEALING_SECRET', 'PROXY_APPROVAL_SEALING_SECRET', 'PROXY_APPROVAL_SIGNING_SECRET'] as const

/** Two names of one secret (sealing-secret.ts), which may hold the same key. */
const ONE_SECRET = new Set(['PROXY_SEALING_SECRET', 'PROXY_APPROVAL_SEALING_SECRET'])

const BASE64ISH = /^(?:whsec_)?([A-Za-z0-9+/_-]+)={0,2}$/

/**
 * The byte strings a secret could key something with, as hex: its UTF-8 text and, when it reads as base64, the decoded
 * bytes.
 */
export function keyReadings (value: string): Set<string> {
  const readings = new Set([Buffer.from(value, 'utf8').toString('hex')])
  const match = BASE64ISH.exec(value)
  // Node's base64 decoder reads both alphabets and ignores padding and the last character's spare bits.
  const decoded = match?.[1] === undefined ? null : Buffer.from(match[1], 'base64')
  if (decoded !== null && decoded.length > 0) readings.add(decoded.toString('hex'))
  return readings
}

/**
 * One problem per pair that shares a key; never quotes a value. `redisPassword` is the one in PROXY_REDIS_URL, if any.
 */
export function sameSecretProblems (
  settings: Readonly<Record<string, unknown>>,
  redisPassword: string | null,
): string[] {
  const values = new Map<string, string>()
  for (const name of ALL_SECRETS) {
    const read = readSecretVariable(settings, name)
    // Unreadable ones are reported where they are read.
    if (read.value !== undefined) values.set(name, read.value)
  }
  if (redisPassword !== null && redisPassword !== '') values.set('the password in PROXY_REDIS_URL', redisPassword)
  const problems: string[] = []
  for (const name of MUST_BE_DISTINCT) {
    const value = values.get(name)
    if (value === undefined) continue
    const mine = keyReadings(value)
    for (const [other, otherValue] of values) {
      if (other === name ||
        (MUST_BE_DISTINCT as readonly string[]).indexOf(other) > MUST_BE_DISTINCT.indexOf(name) ||
        (ONE_SECRET.has(name) && ONE_SECRET.has(other))) continue
      if ([...keyReadings(otherValue)].some((reading) => mine.has(reading))) {
        problems.push(`${name} is the same key as ${other}: use a secret of its own (payments-auth-proxy webhook-secrets prints one)`)
      }
    }
  }
  return problems
}
