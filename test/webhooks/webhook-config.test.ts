/**
 * PROXY_WEBHOOK_* (SPEC §10): table-driven, from data, never process.env. Each problem names its
 * variable; no secret value is ever quoted.
 */
import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, type Env } from '../../src/load-config.js'
import { problemsOf } from '../helpers/config-problems.js'
import { inboxEnv, PATH_TOKEN, PREVIOUS_SIGNING_SECRET, SIGNING_SECRET, VERIFY_SECRET } from './inbox-harness.js'

const base = (overrides: Env = {}): Env => inboxEnv('http://127.0.0.1:3000/payments/events', '/tmp/x/webhooks.db', overrides)

t.test('the inbox is off without PROXY_WEBHOOK_LISTEN, and other inbox settings are then named in a warning', async (t) => {
  const { config, warnings } = loadConfig({ ...base(), PROXY_WEBHOOK_LISTEN: undefined })
  t.equal(config.webhooks, null)
  t.ok(warnings.some((w) => w.includes('PROXY_WEBHOOK_PATH_TOKEN') && w.includes('inbox is off') && !w.includes(PATH_TOKEN)))
})

t.test('defaults and parsed settings', async (t) => {
  const { config, warnings } = loadConfig(base({ PROXY_WEBHOOK_LISTEN: '[::]:8443', PROXY_WEBHOOK_EVENT_ID_HEADER: 'X-Event-Id' }))
  const w = config.webhooks
  if (w === null) throw new Error('inbox off')
  t.same(w.listen, { host: '::', port: 8443 })
  t.same(w.retryScheduleMs, [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
  t.equal(w.bodyLimitBytes, 256 * 1024)
  t.equal(w.retentionS, 604_800)
  t.equal(w.deliveryTimeoutS, 15)
  t.equal(w.concurrency, 8)
  t.equal(w.orderMaxWaitS, 900)
  t.equal(w.verificationHeader, 'x-webhook-signature', 'the header never stored, whether or not it is verified')
  t.equal(w.storeMaxEvents, 1_000_000)
  t.equal(w.storeMaxBytes, 1024 ** 3)
  t.equal(w.eventIdHeader, 'x-event-id')
  t.equal(w.verify, null)
  t.ok(warnings.some((x) => x.includes('the path token is the only protection')), 'warns that the path token is the only protection')
})

t.test('secrets from _FILE variables', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pap-whcfg-'))
  const file = (name: string, value: string): string => { writeFileSync(join(dir, name), `${value}\n`); return join(dir, name) }
  const { config } = loadConfig(base({
    PROXY_WEBHOOK_PATH_TOKEN: undefined, PROXY_WEBHOOK_PATH_TOKEN_FILE: file('token', PATH_TOKEN),
    PROXY_WEBHOOK_SIGNING_SECRET: undefined, PROXY_WEBHOOK_SIGNING_SECRET_FILE: file('signing', SIGNING_SECRET),
    PROXY_WEBHOOK_VERIFY_SECRET_FILE: file('verify', VERIFY_SECRET), PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS: PREVIOUS_SIGNING_SECRET,
  }))
  t.same(config.webhooks?.pathTokens, [PATH_TOKEN])
  t.same(config.webhooks?.signingSecrets, [SIGNING_SECRET, PREVIOUS_SIGNING_SECRET])
  t.same(config.webhooks?.verify, { scheme: 'header-secret', header: 'x-webhook-signature', secret: VERIFY_SECRET })
})

const cases: Array<[string, Env, RegExp]> = [
  ['listen without a port', { PROXY_WEBHOOK_LISTEN: '0.0.0.0' }, /^PROXY_WEBHOOK_LISTEN must be/],
  ['listen on a name', { PROXY_WEBHOOK_LISTEN: 'example.com:8443' }, /^PROXY_WEBHOOK_LISTEN must be/],
  ['no path token', { PROXY_WEBHOOK_PATH_TOKEN: undefined }, /^PROXY_WEBHOOK_PATH_TOKEN \(or PROXY_WEBHOOK_PATH_TOKEN_FILE\) is required/],
  ['a short path token', { PROXY_WEBHOOK_PATH_TOKEN: 'short-token-123' }, /^PROXY_WEBHOOK_PATH_TOKEN must be at least 22 characters/],
  ['a path token with other characters', { PROXY_WEBHOOK_PATH_TOKEN: 'wht_abcdefghijklmnopqrstuv!' }, /^PROXY_WEBHOOK_PATH_TOKEN must be/],
  ['a short previous path token', { PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS: 'old' }, /^PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS must be/],
  ['no signing secret', { PROXY_WEBHOOK_SIGNING_SECRET: undefined }, /^PROXY_WEBHOOK_SIGNING_SECRET \(or PROXY_WEBHOOK_SIGNING_SECRET_FILE\) is required/],
  ['a signing secret without whsec_', { PROXY_WEBHOOK_SIGNING_SECRET: 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }, /^PROXY_WEBHOOK_SIGNING_SECRET must be whsec_/],
  ['a signing secret too short', { PROXY_WEBHOOK_SIGNING_SECRET: 'whsec_c2hvcnQ=' }, /^PROXY_WEBHOOK_SIGNING_SECRET must be whsec_/],
  ['a previous signing secret not base64', { PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS: 'whsec_***' }, /^PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS must be whsec_/],
  ['no delivery URL', { PROXY_WEBHOOK_DELIVER_TO: undefined }, /^PROXY_WEBHOOK_DELIVER_TO is required/],
  ['a delivery URL that is not http', { PROXY_WEBHOOK_DELIVER_TO: 'ftp://app/events' }, /^PROXY_WEBHOOK_DELIVER_TO must use https/],
  ['a bad CIDR in allowed sources', { PROXY_WEBHOOK_ALLOWED_SOURCES: '203.0.113.0/33' }, /^PROXY_WEBHOOK_ALLOWED_SOURCES: "203.0.113.0\/33" is not a CIDR/],
  ['a bad trusted proxy', { PROXY_WEBHOOK_TRUSTED_PROXIES: 'lb.internal' }, /^PROXY_WEBHOOK_TRUSTED_PROXIES: "lb.internal" is not a CIDR/],
  ['an unknown scheme', { PROXY_WEBHOOK_VERIFY_SCHEME: 'rsa' }, /^PROXY_WEBHOOK_VERIFY_SCHEME must be one of header-secret, hmac/],
  ['an unknown algorithm', { PROXY_WEBHOOK_VERIFY_ALGORITHM: 'md5' }, /^PROXY_WEBHOOK_VERIFY_ALGORITHM must be one of sha256, sha512/],
  ['an unknown encoding', { PROXY_WEBHOOK_VERIFY_ENCODING: 'base32' }, /^PROXY_WEBHOOK_VERIFY_ENCODING must be one of hex, base64/],
  ['a bad event id pointer', { PROXY_WEBHOOK_EVENT_ID_POINTER: 'id' }, /^PROXY_WEBHOOK_EVENT_ID_POINTER must be a JSON Pointer/],
  ['a bad order key pointer', { PROXY_WEBHOOK_ORDER_KEY_POINTER: 'data/ref' }, /^PROXY_WEBHOOK_ORDER_KEY_POINTER must be a JSON Pointer/],
  ['a bad schedule step', { PROXY_WEBHOOK_RETRY_SCHEDULE: '5s,soon' }, /^PROXY_WEBHOOK_RETRY_SCHEDULE must be/],
  ['an empty schedule', { PROXY_WEBHOOK_RETRY_SCHEDULE: ',' }, /^PROXY_WEBHOOK_RETRY_SCHEDULE must be/],
  ['a zero concurrency', { PROXY_WEBHOOK_CONCURRENCY: '0' }, /^PROXY_WEBHOOK_CONCURRENCY /],
  ['a tiny body limit', { PROXY_WEBHOOK_BODY_LIMIT_BYTES: '10' }, /^PROXY_WEBHOOK_BODY_LIMIT_BYTES /],
  ['a path token and its file', { PROXY_WEBHOOK_PATH_TOKEN_FILE: '/run/secrets/token' }, /^PROXY_WEBHOOK_PATH_TOKEN and PROXY_WEBHOOK_PATH_TOKEN_FILE are both set/],
  ['an unreadable verify secret file', { PROXY_WEBHOOK_VERIFY_SECRET_FILE: '/nonexistent/verify' }, /^PROXY_WEBHOOK_VERIFY_SECRET_FILE: cannot read/],
]

for (const [name, overrides, expected] of cases) {
  t.test(`refused: ${name}`, async (t) => {
    const problems = problemsOf(base(overrides))
    t.equal(problems.length, 1, problems.join('; '))
    t.match(problems[0], expected)
  })
}

t.test('every problem is reported at once, and no secret value is quoted', async (t) => {
  const secrets = { PROXY_WEBHOOK_PATH_TOKEN: 'secret-path-token-xyz!', PROXY_WEBHOOK_SIGNING_SECRET: 'whsec_not base64 secret', PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS: 'prev-secret-short' }
  const problems = problemsOf(base({ ...secrets, PROXY_WEBHOOK_DELIVER_TO: undefined, PROXY_WEBHOOK_RETRY_SCHEDULE: 'x' }))
  t.equal(problems.length, 5, problems.join('; '))
  for (const value of Object.values(secrets)) t.notOk(problems.join('\n').includes(value), 'the value is not quoted')
})
