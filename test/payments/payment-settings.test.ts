/** `PROXY_PAYMENTS*` (SPEC §12) read into the typed config: defaults, what stops the start, what warns. */
import t from 'tap'
import { loadConfig, type Env } from '../../src/load-config.js'
import { problemsOf } from '../helpers/config-problems.js'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const SEALING = 'whsec_cGF5bWVudHMtc2VhbGluZy1rZXktb2YtdGhlLXRlc3Rz'
const OTHER_SEALING = 'whsec_YW5vdGhlci1zZWFsaW5nLWtleS1vZi10aGUtdGVzdHM='
const base: Env = { PAYMENTS_FIAT_BASE_URL: 'https://api.example.com/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_k', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_k', PROXY_EGRESS_IP_URL: 'off' }
const on: Env = { ...base, PROXY_PAYMENTS: 'on', PROXY_SEALING_SECRET: SEALING, PROXY_PAYMENTS_NOTIFY_URL: 'http://127.0.0.1:3000/payments/notifications', PROXY_WEBHOOK_SIGNING_SECRET: SECRET }

t.test('off by default: no payments config, and its settings alone only warn', async (t) => {
  t.equal(loadConfig(base).config.payments, null)
  const { config, warnings } = loadConfig({ ...base, PROXY_PAYMENTS_LOOKUP_CONCURRENCY: '4' })
  t.equal(config.payments, null)
  t.match(warnings, [/PROXY_PAYMENTS_LOOKUP_CONCURRENCY set but PROXY_PAYMENTS is not on/])
})

t.test('on: the SPEC\'s defaults', async (t) => {
  const payments = loadConfig(on).config.payments
  t.same(payments, {
    paths: ['/**'],
    transactionIdPointer: '/data/transactionId',
    statusPointer: '/data/status',
    succeededStatuses: ['successful', 'success', 'completed'],
    failedStatuses: ['failed', 'cancelled', 'canceled', 'reversed', 'rejected', 'expired'],
    amountPointer: '/amount',
    currencyPointer: '/currency',
    eventTransactionIdPointer: '/data/transactionId',
    eventReferencePointer: '/data/externalReference',
    confirm: 'lookup',
    lookupPaths: { fiat: '/transactions/{transactionId}', crypto: null },
    lookupScheduleMs: [60_000, 300_000, 900_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000],
    lookupConcurrency: 2,
    lookupsPerSecond: 5,
    notifyUrl: 'http://127.0.0.1:3000/payments/notifications',
    signingSecrets: [SECRET],
    sealingSecret: SEALING,
    retryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    retentionS: 2_592_000,
    storePath: './data/webhooks.db',
  })
})

t.test('the notification URL defaults to the inbox\'s application, whose secret signs; with the inbox off neither warns', async (t) => {
  const { config, warnings } = loadConfig({ ...base, PROXY_PAYMENTS: 'on', PROXY_SEALING_SECRET: SEALING, PROXY_WEBHOOK_DELIVER_TO: 'http://127.0.0.1:3000/events', PROXY_WEBHOOK_SIGNING_SECRET: SECRET })
  t.equal(config.payments?.notifyUrl, 'http://127.0.0.1:3000/events')
  t.same(warnings, [], 'the inbox\'s variables serve payments: no "inbox is off" warning')
})

t.test('what stops the start, each named', async (t) => {
  const cases: Array<[string, Env, RegExp]> = [
    ['idempotency off', { ...on, PROXY_IDEMPOTENCY: 'off' }, /PROXY_PAYMENTS=on needs PROXY_IDEMPOTENCY=on/],
    ['no URL', { ...base, PROXY_PAYMENTS: 'on', PROXY_SEALING_SECRET: SEALING, PROXY_WEBHOOK_SIGNING_SECRET: SECRET }, /PROXY_PAYMENTS_NOTIFY_URL \(or PROXY_WEBHOOK_DELIVER_TO\) is required/],
    ['no sealing secret', { ...on, PROXY_SEALING_SECRET: undefined }, /PROXY_PAYMENTS=on needs PROXY_SEALING_SECRET \(or PROXY_APPROVAL_SEALING_SECRET, or either with _FILE\)/],
    ['two sealing secrets that differ', { ...on, PROXY_APPROVAL_SEALING_SECRET: OTHER_SEALING }, /PROXY_SEALING_SECRET and PROXY_APPROVAL_SEALING_SECRET are both set, to different keys/],
    ['the sealing secret the same key as the signing secret', { ...on, PROXY_SEALING_SECRET: SECRET }, /PROXY_SEALING_SECRET is the same key as PROXY_WEBHOOK_SIGNING_SECRET/],
    ['no secret', { ...base, PROXY_PAYMENTS: 'on', PROXY_SEALING_SECRET: SEALING, PROXY_PAYMENTS_NOTIFY_URL: 'http://127.0.0.1:1/n' }, /PROXY_WEBHOOK_SIGNING_SECRET \(or _FILE\) is required with PROXY_PAYMENTS=on/],
    ['a secret that is not whsec_', { ...on, PROXY_WEBHOOK_SIGNING_SECRET: 'hunter2hunter2' }, /PROXY_WEBHOOK_SIGNING_SECRET must be whsec_/],
    ['a URL with credentials', { ...on, PROXY_PAYMENTS_NOTIFY_URL: 'http://u:p@127.0.0.1/n' }, /PROXY_PAYMENTS_NOTIFY_URL must not contain credentials/],
    ['a pointer that is not one', { ...on, PROXY_PAYMENTS_STATUS_POINTER: 'data.status' }, /PROXY_PAYMENTS_STATUS_POINTER must be a JSON Pointer/],
    ['a status in both lists', { ...on, PROXY_PAYMENTS_FAILED_STATUSES: 'failed,Successful' }, /both list successful/],
    ['a schedule that goes back', { ...on, PROXY_PAYMENTS_LOOKUP_SCHEDULE: '5m,1m' }, /PROXY_PAYMENTS_LOOKUP_SCHEDULE must be increasing/],
    ['a schedule that is not one', { ...on, PROXY_PAYMENTS_LOOKUP_SCHEDULE: 'soon' }, /PROXY_PAYMENTS_LOOKUP_SCHEDULE must be a comma-separated list/],
    ['a look-up path without a placeholder', { ...on, PROXY_PAYMENTS_LOOKUP_PATH: '/transactions' }, /PROXY_PAYMENTS_LOOKUP_PATH must be a path/],
    ['a look-up path that could leave its base', { ...on, PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH: '/../auth/{transactionId}' }, /PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH must be a path/],
    ['a path pattern without /', { ...on, PROXY_PAYMENTS_PATHS: 'payouts' }, /PROXY_PAYMENTS_PATHS: "payouts" must start with \//],
    ['a rate of 0', { ...on, PROXY_PAYMENTS_LOOKUPS_PER_SECOND: '0' }, /PROXY_PAYMENTS_LOOKUPS_PER_SECOND/],
  ]
  for (const [name, env, problem] of cases) {
    const problems = problemsOf(env)
    t.equal(problems.length, 1, `${name}: one problem (${problems.join('; ')})`)
    t.match(problems[0], problem, name)
  }
  t.notOk(problemsOf({ ...base, PROXY_PAYMENTS: 'on', PROXY_WEBHOOK_SIGNING_SECRET: 'not-a-secret' }).join('\n').includes('not-a-secret'), 'never quotes a secret')
})

t.test('look-up paths: off on fiat, a crypto one, both placeholders', async (t) => {
  const payments = loadConfig({ ...on, PROXY_PAYMENTS_LOOKUP_PATH: 'off', PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH: '/v1/transactions/{externalReference}/status' }).config.payments
  t.same(payments?.lookupPaths, { fiat: null, crypto: '/v1/transactions/{externalReference}/status' })
})
