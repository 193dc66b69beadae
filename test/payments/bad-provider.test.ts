/**
 * BAD_INPUTS "Payments (SPEC §12)", the rows about the provider, over real sockets: an answer whose
 * transaction id is repeated on the way to its pointer or is not a string or an integer (untracked,
 * logged); a streamed one without a usable id (unknown: its Payment-Id is already sent); look-ups answered 500, 404, not JSON, with a status nobody listed, or never (failed or
 * pending, the next step, never settled, the proxy unaffected); a look-up answered 401 (§5: the
 * token replaced once and the look-up retried); and an intent that cannot be stored (503
 * STATE_UNAVAILABLE, nothing forwarded).
 */
import t from 'tap'
import { join } from 'node:path'
import { openDatabase } from '../../src/sqlite/open-database.js'
import { eventually } from '../helpers/eventually.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { metric, notifications, payout, paymentOf, setting, startInProcess, waitForState } from './payments-harness.js'

t.test('the provider\'s answer with its transaction id repeated on the way, or not a string or an integer: passed back unchanged, not followed (untracked), logged with the path', async (t) => {
  const { provider, env } = await setting(t)
  const answers = ['{"data":{"transactionId":"tx-a"},"data":{"transactionId":"tx-b"}}', '{"data":{"transactionId":"tx-a","transactionId":"tx-b"}}', '{"data":{"transactionId":{"id":"tx-a"}}}', '{"data":{"transactionId":true}}']
  provider.setUpstreamHandler((req, res) => {
    if (req.method !== 'POST') return false
    const body = answers.shift() ?? '{}'
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
    return true
  })
  const sidecar = await startInProcess(t, env)
  for (let i = 0; i < 4; i++) {
    const sent = answers[0]
    const res = await payout(sidecar.url, { amount: 1, currency: 'KES', externalReference: `untracked-${i}` })
    t.equal(await res.text(), sent, 'the answer, byte for byte')
    t.equal(res.headers.get('payment-id'), null, 'no Payment-Id: no record')
    t.equal((await payout(sidecar.url, { amount: 1, currency: 'KES', externalReference: `untracked-${i}` })).headers.get('payment-id'), null, 'nor on its replay')
    t.equal(await paymentOf(sidecar.url, `untracked-${i}`), null)
  }
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payments_tracked_total\{outcome="untracked"\}/), 4)
  const warned = sidecar.logs.find('payment not followed: the provider\'s answer has no usable transaction id')
  t.equal(warned.length, 4)
  t.match(warned, [{ level: 40, path: '/v1/payouts', reason: /repeated/ }, { reason: /repeated/ }, { reason: /not a non-empty string or an integer/ }, { reason: /not a non-empty string or an integer/ }])
})

t.test('a streamed answer (chunked, or larger than the reading bound) without a usable transaction id: passed back whole, its Payment-Id names a payment left unknown, not a dropped one', async (t) => {
  const { provider, env } = await setting(t)
  // Chunked; over the 16 KiB an answer is held whole for; over the 256 KiB it is read up to.
  const padded = (kib: number): string => JSON.stringify({ data: { status: 'accepted' }, padding: 'x'.repeat(kib * 1024) })
  const answers = [{ body: '{"data":{"status":"accepted"}}', chunked: true }, { body: padded(20), chunked: false }, { body: padded(300), chunked: false }]
  provider.setUpstreamHandler((req, res) => {
    if (req.method !== 'POST') return false
    const answer = answers.shift() ?? { body: '{}', chunked: false }
    if (answer.chunked) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write(answer.body.slice(0, 10))
      setTimeout(() => res.end(answer.body.slice(10)), 20)
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer.body) })
      res.end(answer.body)
    }
    return true
  })
  const sidecar = await startInProcess(t, env)
  for (const [i, sent] of answers.map((answer) => answer.body).entries()) {
    const reference = `streamed-${i}`
    const res = await payout(sidecar.url, { amount: 1, currency: 'KES', externalReference: reference })
    t.equal(await res.text(), sent, 'the answer, byte for byte')
    const id = res.headers.get('payment-id')
    t.ok(id, 'the Payment-Id sent with the headers')
    const payment = await waitForState(sidecar.url, reference, 'unknown')
    t.equal(payment.id, id, 'names the payment that stays')
    t.equal((await payout(sidecar.url, { amount: 1, currency: 'KES', externalReference: reference })).headers.get('payment-id'), id, 'and so does its replay')
  }
  const warned = sidecar.logs.find('payment unknown: the provider\'s streamed answer has no usable transaction id')
  t.match(warned, [{ level: 40, reference: 'streamed-0', reason: /no transaction id/ }, { reference: 'streamed-1', reason: /no transaction id/ }, { reference: 'streamed-2', reason: /too large to read/ }])
  t.equal(warned.length, 3)
})

t.test('look-ups answered 500, 404, not JSON, with an unlisted status, or never: failed (or pending), the next step, never settled; the proxy unaffected meanwhile', async (t) => {
  const { provider, app, env } = await setting(t, { PROXY_PAYMENTS_LOOKUP_SCHEDULE: '1s,4s', PROXY_UPSTREAM_TIMEOUT_SECONDS: '1', PROXY_PAYMENTS_LOOKUP_CONCURRENCY: '8', PROXY_PAYMENTS_LOOKUPS_PER_SECOND: '50' })
  const behaviour = new Map<string, (res: import('node:http').ServerResponse) => void>()
  const json = (status: number, body: string) => (res: import('node:http').ServerResponse): void => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(body) }
  provider.setUpstreamHandler((req, res) => {
    const id = /\/transactions\/([^/?]+)/.exec(req.url ?? '')?.[1]
    const act = id === undefined ? undefined : behaviour.get(id)
    if (req.method !== 'GET' || act === undefined) return false
    act(res)
    return true
  })
  const sidecar = await startInProcess(t, env)
  const cases: Array<[string, (res: import('node:http').ServerResponse) => void, string]> = [
    ['500', json(500, '{"data":{"status":"successful"}}'), 'failed'],
    ['404', json(404, '{"message":"not found"}'), 'failed'],
    ['not JSON', (res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<h1>successful</h1>') }, 'failed'],
    ['an unlisted status', json(200, '{"data":{"status":"SUCCESSFULISH"}}'), 'pending'],
    ['hanging', () => {}, 'failed'],
  ]
  for (const [name, act] of cases) {
    const { data } = await (await payout(sidecar.url, { amount: 1, currency: 'KES', externalReference: `bad-lookup-${name}` })).json() as { data: { transactionId: string } }
    behaviour.set(data.transactionId, act)
  }
  const started = Date.now()
  let slowest = 0
  const statuses = new Set<number>()
  while (Date.now() - started < 2_500) {
    const at = performance.now()
    const res = await fetch(`${sidecar.url}/sandbox/fiat/v1/accounts/balance`)
    statuses.add(res.status)
    await res.arrayBuffer()
    slowest = Math.max(slowest, performance.now() - at)
  }
  t.same([...statuses], [200], 'the proxy answered its own traffic meanwhile')
  t.ok(slowest < 1_000, `promptly (slowest ${Math.round(slowest)} ms)`)
  for (const [name, , outcome] of cases) {
    const stale = await waitForState(sidecar.url, `bad-lookup-${name}`, 'stale', 10_000)
    t.match(stale, { settledAt: null, lookups: { count: 2, lastOutcome: outcome } }, `${name}: two steps, then stale, never settled`)
  }
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payment_lookups_total\{outcome="failed"\}/), 8)
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payment_lookups_total\{outcome="pending"\}/), 2)
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payment_lookups_total\{outcome="final"\}/), 0)
  const reasons = sidecar.logs.find('payment look-up failed; the next step of the schedule follows').map((l) => String(l['reason']))
  for (const reason of [/^HTTP 500$/, /^HTTP 404$/, /not JSON/, /^timeout/]) t.equal(reasons.filter((r) => reason.test(r)).length, 2, `logged at warn twice: ${String(reason)}`)
  await eventually(() => notifications(app).length === 5, { what: 'payment.stale for each' })
})

t.test('a look-up answered 401: the token is replaced once and the look-up retried with the new one (SPEC §5)', async (t) => {
  const { provider, env } = await setting(t, { PROXY_PAYMENTS_LOOKUP_SCHEDULE: '1s,30s' }, { settleAfterMs: 100 })
  const sidecar = await startInProcess(t, env)
  await payout(sidecar.url, { amount: 1, currency: 'KES', externalReference: 'lookup-401' })
  const tokenRequests = provider.tokenRequests.length
  provider.revokeAllTokens()
  const settled = await waitForState(sidecar.url, 'lookup-401', 'succeeded', 10_000)
  t.match(settled, { settledBy: 'lookup', lookups: { count: 1 } }, 'one look-up, answered after its retry')
  const gets = provider.upstreamRequests.filter((r) => r.method === 'GET' && r.url.includes('/transactions/'))
  t.same(gets.map((r) => r.tokenValid), [false, true], 'the rejected token, then the replacement')
  t.equal(provider.tokenRequests.length, tokenRequests + 1, 'one token request')
})

t.test('an intent that cannot be stored: 503 STATE_UNAVAILABLE with Retry-After, nothing forwarded, the §8 reference free again', async (t) => {
  const { provider, dir, env } = await setting(t)
  const sidecar = await startInProcess(t, env)
  // Another process holds the store's write lock past its busy timeout.
  const db = await openDatabase(join(dir, 'webhooks.db'))
  db.exec('BEGIN EXCLUSIVE')
  const res = await payout(sidecar.url, { amount: 1, currency: 'KES', externalReference: 'locked-1' })
  db.exec('ROLLBACK')
  db.close()
  await assertProxyError(t, res, 503, 'STATE_UNAVAILABLE')
  t.ok(Number(res.headers.get('retry-after')) >= 1)
  t.notOk(provider.upstreamRequests.some((r) => r.method === 'POST'), 'nothing forwarded')
  t.match(sidecar.logs.find('payment intent not stored: the request is not forwarded'), [{ level: 40, code: 'STATE_UNAVAILABLE' }])
  await eventually(async () => (await payout(sidecar.url, { amount: 1, currency: 'KES', externalReference: 'locked-1' })).status === 200, { what: 'the retry forwarded' })
  t.match(await paymentOf(sidecar.url, 'locked-1'), { state: 'pending' })
})
