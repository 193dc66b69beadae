/**
 * SPEC §13's get_payment and list_payments (with §12 on), with the official client against the
 * built process: a payout sent over MCP is followed like one sent over HTTP, an agent looks up its
 * own payment by reference or id and lists its payments, and another agent's payment is the tool
 * error PAYMENT_NOT_FOUND, as absent as one that does not exist. Without payments the two tools are
 * not listed. A record edited in the store is `unverified` to the agent too, never `succeeded`.
 */
import { join } from 'node:path'
import t from 'tap'
import { AGENT_A_KEY, AGENT_B_KEY, callersFile, editStoredPayment, paymentOf, setting, startSidecar } from '../payments/payments-harness.js'
import { listeningPort, runCli } from '../helpers/child-proxy.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { assertToolError, call, connect } from './mcp-rig.js'

async function listeningPortOf (child: ReturnType<typeof runCli>): Promise<number> {
  await eventually(() => /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(child.stdout()), { what: 'the proxy listening', timeoutMs: HANG_MS, detail: () => child.stdout() + child.stderr() })
  return listeningPort(child)
}

t.test('get_payment and list_payments: an agent sees its own payments, another\'s is PAYMENT_NOT_FOUND', async (t) => {
  const { dir, env } = await setting(t)
  const sidecar = await startSidecar(t, { ...env, PROXY_CALLERS_FILE: callersFile(dir), PROXY_MCP: 'on' })
  const a = await connect(t, sidecar, AGENT_A_KEY)
  const b = await connect(t, sidecar, AGENT_B_KEY)
  const names = (await a.listTools()).tools.map((tool) => tool.name)
  t.ok(names.includes('get_payment') && names.includes('list_payments'), names.join(', '))

  const sent = await call(a, 'payments_request', { environment: 'sandbox', interface: 'fiat', method: 'POST', path: '/v1/payouts', body: { amount: 5, currency: 'KES', externalReference: 'mcp-pay-1' } })
  t.equal(sent.isError, undefined, JSON.stringify(sent.structuredContent))
  t.equal(sent.structuredContent['status'], 200)
  const overHttp = await paymentOf(sidecar.url, 'mcp-pay-1', AGENT_A_KEY)
  t.equal(overHttp?.state, 'pending', 'followed like the same payout over HTTP')
  t.same(sent.structuredContent['payment'], { id: overHttp?.id }, 'the result names the payment (Payment-Id)')

  const byReference = await call(a, 'get_payment', { reference: 'mcp-pay-1' })
  t.equal(byReference.isError, undefined)
  const payment = byReference.structuredContent['payment'] as { id: string, state: string, externalReference: string, caller: string }
  t.match(payment, { id: overHttp?.id, state: 'pending', externalReference: 'mcp-pay-1', caller: 'agent-a' })
  t.match((await call(a, 'get_payment', { id: payment.id })).structuredContent, { payment: { id: payment.id } }, 'by its id')
  t.match((await call(a, 'get_payment', { reference: 'mcp-pay-1', environment: 'sandbox' })).structuredContent, { payment: { id: payment.id } })
  assertToolError(t, await call(a, 'get_payment', { reference: 'mcp-pay-1', environment: 'production' }), 404, 'PAYMENT_NOT_FOUND', 'another environment')

  const listed = await call(a, 'list_payments', {})
  t.same((listed.structuredContent['payments'] as Array<{ id: string }>).map((p) => p.id), [payment.id])
  t.same((await call(a, 'list_payments', { state: 'succeeded' })).structuredContent['payments'], [])

  const theirs = assertToolError(t, await call(b, 'get_payment', { reference: 'mcp-pay-1' }), 404, 'PAYMENT_NOT_FOUND', 'another agent\'s reference')
  const none = assertToolError(t, await call(b, 'get_payment', { reference: 'no-such-reference' }), 404, 'PAYMENT_NOT_FOUND', 'none at all')
  t.same(theirs, none, 'another agent\'s payment and none at all: the same error')
  assertToolError(t, await call(b, 'get_payment', { id: payment.id }), 404, 'PAYMENT_NOT_FOUND', 'another agent\'s id')
  t.same((await call(b, 'list_payments', {})).structuredContent['payments'], [], 'another agent lists none of them')

  const refused = await call(a, 'list_payments', { state: 'done' })
  t.equal(refused.isError, true, 'a state outside the schema is refused before any request')
})

t.test('a payment record edited in the SQLite file to succeeded: get_payment and list_payments say unverified, never succeeded', async (t) => {
  const { dir, env } = await setting(t)
  const sidecar = await startSidecar(t, { ...env, PROXY_CALLERS_FILE: callersFile(dir), PROXY_MCP: 'on' })
  const a = await connect(t, sidecar, AGENT_A_KEY)
  const sent = await call(a, 'payments_request', { environment: 'sandbox', interface: 'fiat', method: 'POST', path: '/v1/payouts', body: { amount: 5, currency: 'KES', externalReference: 'mcp-edited' } })
  t.equal(sent.structuredContent['status'], 200)
  const id = (sent.structuredContent['payment'] as { id: string }).id
  // The state alone: what names the payment and its caller still verifies, so the agent still finds it.
  await editStoredPayment(join(dir, 'webhooks.db'), id, (r) => ({ ...r, state: 'succeeded', settledBy: 'lookup', settledAtMs: Date.now(), confirmed: true }))
  t.match((await call(a, 'get_payment', { reference: 'mcp-edited' })).structuredContent, { payment: { id, state: 'unverified', confirmed: false, settledBy: null } }, 'get_payment')
  t.match((await call(a, 'list_payments', {})).structuredContent, { payments: [{ id, state: 'unverified' }] }, 'list_payments')
  t.same((await call(a, 'list_payments', { state: 'succeeded' })).structuredContent['payments'], [], 'not among the succeeded')
})

t.test('without payments, get_payment and list_payments are not listed', async (t) => {
  const { dir, env } = await setting(t, { PROXY_PAYMENTS: 'off' })
  const child = runCli(t, [], { ...env, PROXY_CALLERS_FILE: callersFile(dir), PROXY_MCP: 'on' })
  const url = `http://127.0.0.1:${await listeningPortOf(child)}`
  const names = (await (await connect(t, { url }, AGENT_A_KEY)).listTools()).tools.map((tool) => tool.name)
  t.ok(names.includes('payments_request'), names.join(', '))
  t.notOk(names.includes('get_payment') || names.includes('list_payments'), names.join(', '))
})
