/**
 * SPEC §16 over MCP with the official client: an agent that re-plans a payout (a new reference for
 * the same payout) gets a tool error naming the earlier payment and the reference a retry must
 * reuse; the same call with that reference is a replay; `get_limits` is listed to a caller with
 * amount limits and tells what is used, held and left, and what a failed payout gave back.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { eventually } from '../helpers/eventually.js'
import { call, connect } from '../mcp/mcp-rig.js'
import { paymentOf, setting, startInProcess } from '../payments/payments-harness.js'

const AGENT = 'pak_agent-duplicates-0123456789abcdefghijklmnopqr'
const PLAIN = 'pak_agent-duplicates-plain-0123456789abcdefghijkl'
const APPROVAL_SECRET = `whsec_${Buffer.alloc(32, 6).toString('base64')}`

const payoutArgs = (reference: string, amount: number | string = 150): Record<string, unknown> => ({
  interface: 'fiat',
  method: 'POST',
  path: '/v1/payouts',
  body: { amount, currency: 'KES', externalReference: reference, payoutMethod: { accountName: 'Jane Wanjiru', accountNumber: '254712345678', code: 'MPESA' } },
})

t.test('a re-planned payout over MCP: a tool error that names the earlier payment and its reference; the retry with it replays', async (t) => {
  const setup = await setting(t, { PROXY_PAYMENTS_LOOKUP_SCHEDULE: '1s,2s', PROXY_MCP: 'on', PROXY_DEFAULT_ENVIRONMENT: 'sandbox', PROXY_APPROVAL_SIGNING_SECRET: APPROVAL_SECRET })
  writeFileSync(join(setup.dir, 'callers.yaml'), `callers:
  - id: agent
    keySha256: ${keySha256(AGENT)}
    allow: [{ environments: [sandbox] }]
    amountLimits: [{ amount: /amount, currency: /currency, perRequest: { KES: 5000 }, perDay: { KES: 20000 }, approveAbove: { KES: 1000 } }]
  - { id: plain, keySha256: ${keySha256(PLAIN)}, allow: [{ environments: [sandbox] }] }
`)
  const sidecar = await startInProcess(t, { ...setup.env, PROXY_CALLERS_FILE: join(setup.dir, 'callers.yaml') })
  const plain = await connect(t, sidecar, PLAIN)
  t.notOk((await plain.listTools()).tools.some((tool) => tool.name === 'get_limits'), 'get_limits is not listed to a caller without amount limits')

  const first = await call(plain, 'payments_request', payoutArgs('agent-plan-1'))
  t.equal(first.structuredContent['status'], 200)
  const paymentId = (first.structuredContent['payment'] as { id: string }).id
  const again = await call(plain, 'payments_request', payoutArgs('agent-plan-2'))
  t.equal(again.isError, true, 'the re-planned payout is a tool error')
  t.match(again.structuredContent, { status: 409, body: { error: { code: 'PAYMENT_PROBABLE_DUPLICATE', duplicateOf: { id: paymentId, externalReference: 'agent-plan-1', state: 'pending' } } } })
  const text = again.content.map((c) => c.type === 'text' ? c.text : '').join('\n')
  t.match(text, /state pending/, 'the text tells the earlier payment\'s state')
  t.match(text, /same externalReference/, 'and that a retry reuses its reference')
  t.match(text, /"agent-plan-1"/)
  const retry = await call(plain, 'payments_request', payoutArgs('agent-plan-1'))
  t.match(retry.structuredContent, { status: 200, replayed: true, payment: { id: paymentId } }, 'the retry with that reference is a replay')
  t.equal(setup.provider.upstreamRequests.filter((r) => r.url.includes('/payouts')).length, 1, 'the provider was asked once')

  const agent = await connect(t, sidecar, AGENT)
  t.ok((await agent.listTools()).tools.some((tool) => tool.name === 'get_limits'), 'get_limits is listed to a caller with amount limits')
  t.equal((await call(agent, 'payments_request', payoutArgs('agent-held-1', 900))).structuredContent['status'], 200)
  const held = await call(agent, 'payments_request', payoutArgs('agent-held-2', '900.00'))
  t.match(held.structuredContent, { status: 202, approval: { status: 'pending', duplicateOf: { externalReference: 'agent-held-1' } } }, 'with approveAbove for KES, the re-planned payout waits for a person whatever its amount')
  const limits = await call(agent, 'get_limits', {})
  t.same(limits.structuredContent, {
    limits: [{ paths: ['/**'], currency: 'KES', perRequest: '5000', perDay: '20000', approveAbove: '1000', usedToday: '900', heldForApproval: '900', leftToday: '18200', resetsAt: (Math.floor(Date.now() / 86_400_000) + 1) * 86_400 }],
  })

  setup.provider.transactions.configure({ settleAfterMs: 200, finalStatus: 'failed' })
  t.equal((await call(agent, 'payments_request', payoutArgs('agent-fails', 300))).structuredContent['status'], 200)
  await eventually(async () => (await paymentOf(sidecar.url, 'agent-fails', AGENT))?.state === 'failed', { what: 'the payout failed', timeoutMs: 15_000 })
  await eventually(async () => ((await call(agent, 'get_limits', {})).structuredContent['limits'] as Array<{ usedToday: string }>)[0]?.usedToday === '900', { what: 'its amount back in the day', timeoutMs: 10_000 })
})
