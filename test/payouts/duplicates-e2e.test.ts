/**
 * SPEC §16 over HTTP with Node's fetch against the sidecar built in this process (its log lines
 * captured): a re-planned payout (the same payout under another reference) refused without
 * approvals and held for a person with them; a true retry replayed, never a duplicate; another
 * recipient, amount or currency passing; an earlier failed payment not counting; `100` against
 * `"100.00"`, recipient spellings, the window's edge through the clock seam, `duplicates: allow`,
 * and BAD_INPUTS "Duplicates".
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { systemClock, type Clock } from '../../src/clock.js'
import { loadConfig, type Env } from '../../src/load-config.js'
import { buildServer } from '../../src/server.js'
import { buildInbox } from '../../src/webhooks/inbox-server.js'
import { eventually } from '../helpers/eventually.js'
import { captureLogger } from '../helpers/harness.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { metric, paymentOf, setting, type Setting } from '../payments/payments-harness.js'

const AGENT = 'pak_duplicates-agent-0123456789abcdefghijklmnopqr'
const HELD = 'pak_duplicates-held-0123456789abcdefghijklmnopqrs'
const FREE = 'pak_duplicates-free-0123456789abcdefghijklmnopqrs'
const BIG = 'pak_duplicates-big-0123456789abcdefghijklmnopqrst'
const APPROVAL_SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`
const APPROVER = 'pak_duplicates-approver-0123456789abcdefghijklmn'

function callers (dir: string): string {
  const file = join(dir, 'callers.yaml')
  writeFileSync(file, `callers:
  - { id: agent, keySha256: ${keySha256(AGENT)}, allow: [{}] }
  - id: held
    keySha256: ${keySha256(HELD)}
    allow: [{}]
    amountLimits: [{ amount: /amount, currency: /currency, perDay: { KES: 100000 }, approveAbove: { KES: 50000 } }]
  - id: big
    keySha256: ${keySha256(BIG)}
    allow: [{}]
    amountLimits: [{ amount: /amount, currency: /currency, perDay: { KES: 1000000 }, approveAbove: { KES: 50000 } }]
  - { id: free, keySha256: ${keySha256(FREE)}, allow: [{}], duplicates: allow }
  - { id: treasurer, keySha256: ${keySha256(APPROVER)}, approver: true, allow: [] }
`)
  return file
}

interface Running { url: string, shift: (ms: number) => void, logs: () => string }

/** The sidecar in this process, its wall clock shiftable (the one clock seam) for the window's edge. */
async function start (t: Test, setup: Setting, env: Env = {}): Promise<Running> {
  let offsetMs = 0
  const clock: Clock = { ...systemClock, wallMs: () => Date.now() + offsetMs }
  const { config } = loadConfig({ ...setup.env, PROXY_CALLERS_FILE: callers(setup.dir), PROXY_APPROVAL_SIGNING_SECRET: APPROVAL_SECRET, ...env })
  const { logger, logs } = captureLogger('info')
  const server = await buildServer(config, { logger, clock })
  if (config.webhooks === null) throw new Error('the inbox is off')
  const inbox = await buildInbox(config.webhooks, config.state, { logger, registry: server.metrics.registry, onStored: server.shared.payments?.running?.wake })
  await server.shared.payments?.running?.readEvents(inbox.store)
  t.teardown(async () => { await server.app.close(); await inbox.app.close() })
  await server.app.listen({ host: '127.0.0.1', port: 0 })
  await eventually(() => [...server.sources.values()].every((s) => s.status().ready), { what: 'tokens' })
  const port = (server.app.server.address() as { port: number }).port
  return { url: `http://127.0.0.1:${port}`, shift: (ms) => { offsetMs += ms }, logs: () => logs.lines.join('\n') }
}

async function send (url: string, key: string, body: unknown): Promise<Response> {
  return await fetch(`${url}/sandbox/fiat/v1/payouts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

const forwarded = (setup: Setting, reference: string): number =>
  setup.provider.upstreamRequests.filter((r) => r.url.includes('/payouts') && r.body.toString('utf8').includes(`"${reference}"`)).length

t.test('a re-planned payout refused with the earlier payment; a true retry replayed; another payout passes', async (t) => {
  const setup = await setting(t)
  const sidecar = await start(t, setup)
  const first = await send(sidecar.url, AGENT, { amount: 100, currency: 'KES', externalReference: 'plan-1', payoutMethod: { accountNumber: '+254 700 000 001' } })
  t.equal(first.status, 200)
  const id = first.headers.get('payment-id') ?? ''
  t.match(id, /^pay_/)

  const again = await send(sidecar.url, AGENT, { amount: '100.00', currency: 'KES', externalReference: 'plan-2', payoutMethod: { accountNumber: '254700000001' } })
  const refused = await assertProxyError(t, again, 409, 'PAYMENT_PROBABLE_DUPLICATE', 'the same payout under another reference, 100 against "100.00", +254 700… against 254700…')
  const duplicateOf = (refused as unknown as { error: { duplicateOf: Record<string, unknown> } } | undefined)?.error.duplicateOf
  t.match(duplicateOf, { id, externalReference: 'plan-1', state: 'pending' })
  t.ok(Number.isInteger(duplicateOf?.['createdAt']), 'createdAt in Unix seconds')
  t.match(refused?.error.message, /plan-1/, 'the message names the reference a retry must reuse')
  t.equal(forwarded(setup, 'plan-2'), 0, 'nothing forwarded')
  t.equal(again.headers.get('payment-id'), null, 'no payment named')

  const retry = await send(sidecar.url, AGENT, { amount: 100, currency: 'KES', externalReference: 'plan-1', payoutMethod: { accountNumber: '+254 700 000 001' } })
  t.equal(retry.status, 200, 'a true retry (same reference) is a replay, never a duplicate')
  t.equal(retry.headers.get('idempotent-replayed'), 'true')
  t.equal(retry.headers.get('payment-id'), id)
  t.equal(forwarded(setup, 'plan-1'), 1, 'and was forwarded once')

  for (const [label, body] of [
    ['another recipient', { amount: 100, currency: 'KES', externalReference: 'other-1', payoutMethod: { accountNumber: '254700000002' } }],
    ['another amount', { amount: 101, currency: 'KES', externalReference: 'other-2', payoutMethod: { accountNumber: '254700000001' } }],
    ['another currency', { amount: 100, currency: 'UGX', externalReference: 'other-3', payoutMethod: { accountNumber: '254700000001' } }],
  ] as const) t.equal((await send(sidecar.url, AGENT, body)).status, 200, `${label} passes`)
  t.equal((await send(sidecar.url, FREE, { amount: 100, currency: 'KES', externalReference: 'free-1', recipient: 'x1' })).status, 200)
  t.equal((await send(sidecar.url, FREE, { amount: 100, currency: 'KES', externalReference: 'free-2', recipient: 'x1' })).status, 200, 'duplicates: allow is never judged')
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payments_duplicates_total\{caller="agent",outcome="refused"\}/), 1)
  t.notMatch(sidecar.logs(), new RegExp([AGENT, HELD, FREE].join('|')), 'no caller key in the logs')
})

t.test('held for a person when the entry has approveAbove for the currency, whatever the amount, with duplicateOf and the reason', async (t) => {
  const setup = await setting(t)
  const sidecar = await start(t, setup)
  const first = await send(sidecar.url, HELD, { amount: '10', currency: 'KES', externalReference: 'held-1', recipient: '+254711000001' })
  t.equal(first.status, 200, 'below approveAbove: forwarded')
  const id = first.headers.get('payment-id')
  const second = await send(sidecar.url, HELD, { amount: '10.0', currency: 'KES', externalReference: 'held-2', recipient: '254711000001' })
  t.equal(second.status, 202, 'the re-planned one waits for a person')
  const { approval } = await second.json() as { approval: Record<string, unknown> }
  t.match(approval, { status: 'pending', reason: `probable duplicate of ${String(id)}`, duplicateOf: { id, externalReference: 'held-1', state: 'pending' } })
  t.equal(forwarded(setup, 'held-2'), 0)
  const listed = await (await fetch(`${sidecar.url}/approvals/${String(approval['id'])}`, { headers: { authorization: `Bearer ${APPROVER}` } })).json() as { approval: Record<string, unknown> }
  t.match(listed.approval, { duplicateOf: { id } }, 'GET /approvals/:id shows it')
  const limits = await (await fetch(`${sidecar.url}/limits`, { headers: { authorization: `Bearer ${HELD}` } })).json() as { limits: Array<Record<string, unknown>> }
  t.match(limits.limits, [{ currency: 'KES', usedToday: '10', heldForApproval: '10', leftToday: '99980' }], 'it is reserved like any held request')
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payments_duplicates_total\{caller="held",outcome="held"\}/), 1)
})

t.test('a payout held for a person and then approved is the payment a re-plan is matched with', async (t) => {
  const setup = await setting(t)
  const sidecar = await start(t, setup)
  const body = (reference: string): Record<string, unknown> => ({ amount: 60000, currency: 'KES', externalReference: reference, recipient: '254722000009' })
  const held = await send(sidecar.url, BIG, body('big-1'))
  t.equal(held.status, 202, 'above approveAbove: held')
  const { approval } = await held.json() as { approval: { id: string } }
  const decided = await fetch(`${sidecar.url}/approvals/${approval.id}/approve`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${APPROVER}` }, body: JSON.stringify({ by: 'Ann' }),
  })
  t.equal(decided.status, 200, 'approved by the treasurer')
  await eventually(() => forwarded(setup, 'big-1') === 1, { what: 'the approved payout sent', timeoutMs: 15_000 })
  const payment = await (async () => {
    let found: Awaited<ReturnType<typeof paymentOf>> = null
    await eventually(async () => { found = await paymentOf(sidecar.url, 'big-1', BIG); return found !== null }, { what: 'its payment', timeoutMs: 10_000 })
    return found as unknown as { id: string }
  })()
  t.match(payment.id, /^pay_/)
  const replanned = await send(sidecar.url, BIG, body('big-2'))
  t.equal(replanned.status, 202, 'the re-plan waits for a person too')
  const second = (await replanned.json() as { approval: Record<string, unknown> }).approval
  t.match(second, { reason: `probable duplicate of ${payment.id}`, duplicateOf: { id: payment.id, externalReference: 'big-1' } }, 'and is named a probable duplicate of the approved payment')
  t.equal(forwarded(setup, 'big-2'), 0)
})

t.test('an earlier failed payment does not count', async (t) => {
  const setup = await setting(t, { PROXY_PAYMENTS_LOOKUP_SCHEDULE: '1s,2s' }, { settleAfterMs: 200, finalStatus: 'failed' })
  const sidecar = await start(t, setup)
  t.equal((await send(sidecar.url, AGENT, { amount: 5, currency: 'KES', externalReference: 'fail-1', recipient: '+254722000001' })).status, 200)
  await eventually(async () => (await paymentOf(sidecar.url, 'fail-1', AGENT))?.state === 'failed', { what: 'fail-1 failed', timeoutMs: 15_000 })
  t.equal((await send(sidecar.url, AGENT, { amount: 5, currency: 'KES', externalReference: 'fail-2', recipient: '+254722000001' })).status, 200, 'a failed payout may be planned again')
})

t.test('the window: a payout planned at its end is a duplicate, one just past it is not (PROXY_DUPLICATE_WINDOW_SECONDS)', async (t) => {
  const setup = await setting(t)
  const sidecar = await start(t, setup, { PROXY_DUPLICATE_WINDOW_SECONDS: '60' })
  t.equal((await send(sidecar.url, AGENT, { amount: 7, currency: 'KES', externalReference: 'edge-1', recipient: '254733000001' })).status, 200)
  sidecar.shift(59_000)
  await assertProxyError(t, await send(sidecar.url, AGENT, { amount: 7, currency: 'KES', externalReference: 'edge-2', recipient: '254733000001' }), 409, 'PAYMENT_PROBABLE_DUPLICATE', '59 s later')
  sidecar.shift(1_500)
  t.equal((await send(sidecar.url, AGENT, { amount: 7, currency: 'KES', externalReference: 'edge-3', recipient: '254733000001' })).status, 200, '60.5 s later: outside the window')
})

t.test('PROXY_DUPLICATE_WINDOW_SECONDS=0 turns the check off', async (t) => {
  const setup = await setting(t)
  const sidecar = await start(t, setup, { PROXY_DUPLICATE_WINDOW_SECONDS: '0' })
  for (const reference of ['off-1', 'off-2']) t.equal((await send(sidecar.url, AGENT, { amount: 8, currency: 'KES', externalReference: reference, recipient: '254744000001' })).status, 200)
})

t.test('BAD_INPUTS "Duplicates": the recipient as a number, an array, an object, very long, missing; an amount unreadable', async (t) => {
  const setup = await setting(t)
  const sidecar = await start(t, setup)
  const pair = async (label: string, make: (reference: string) => unknown, duplicate: boolean): Promise<void> => {
    t.equal((await send(sidecar.url, AGENT, make(`${label}-a`))).status, 200, `${label}: the first`)
    const second = await send(sidecar.url, AGENT, make(`${label}-b`))
    if (duplicate) await assertProxyError(t, second, 409, 'PAYMENT_PROBABLE_DUPLICATE', `${label}: the second`)
    else t.equal(second.status, 200, `${label}: the second is never a duplicate`)
  }
  await pair('number', (r) => `{"amount":9,"currency":"KES","externalReference":"${r}","recipient":254755000001}`, true)
  await pair('array', (r) => ({ amount: 9, currency: 'KES', externalReference: r, recipient: ['254755000002'] }), false)
  await pair('object', (r) => ({ amount: 9, currency: 'KES', externalReference: r, recipient: { phone: '254755000003' } }), false)
  await pair('long', (r) => ({ amount: 9, currency: 'KES', externalReference: r, recipient: 'A'.repeat(100_000) }), true)
  await pair('missing', (r) => ({ amount: 9, currency: 'KES', externalReference: r }), false)
  await pair('unreadable', (r) => ({ amount: '9e0', currency: 'KES', externalReference: r, recipient: '254755000004' }), false)
  await assertProxyError(t, await send(sidecar.url, HELD, { amount: '9e0', currency: 'KES', externalReference: 'unreadable-held', recipient: '254755000004' }), 400, 'AMOUNT_UNREADABLE', 'judged by §7')
})

t.test('the recipient pointers: the first that holds a value is the recipient', async (t) => {
  const setup = await setting(t)
  const sidecar = await start(t, setup, { PROXY_DUPLICATE_RECIPIENT_POINTERS: '/to/iban,/recipient' })
  t.equal((await send(sidecar.url, AGENT, { amount: 3, currency: 'EUR', externalReference: 'iban-1', to: { iban: 'GB29 NWBK 6016 1331 9268 19' }, recipient: 'a' })).status, 200)
  await assertProxyError(t, await send(sidecar.url, AGENT, { amount: 3, currency: 'EUR', externalReference: 'iban-2', to: { iban: 'gb29nwbk60161331926819' }, recipient: 'b' }), 409, 'PAYMENT_PROBABLE_DUPLICATE', 'letter case and spaces ignored')
})
