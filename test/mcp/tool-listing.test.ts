/**
 * SPEC §13 tool listing with the official client over real sockets: each caller lists only the tools
 * its allow rules could permit (the approval look-ups while approvals are in use), with both the
 * 2026-07-28 revision and the 2025 handshake; no tool decides an approval, by any name or path.
 */
import t from 'tap'
import { KEYS, assertToolError, call, connect, startMcpRig } from './mcp-rig.js'

const rig = await startMcpRig(t)
const { proxy, provider } = rig

const listed = async (key: string, mode: 'auto' | 'legacy' = 'auto'): Promise<string[]> =>
  (await (await connect(t, proxy, key, mode)).listTools()).tools.map((tool) => tool.name)

t.test('each caller lists only what its rules could permit', async (t) => {
  // payout-agent: sandbox fiat GET/POST /payouts/** and /transactions/*, with amount limits (get_limits, SPEC §16).
  t.same(await listed(KEYS.agent), ['payments_request', 'get_transaction', 'send_payout', 'get_approval', 'list_approvals', 'get_limits'])
  // reader: fiat GET /transactions/** in any environment; not the POST, not crypto; no amount limits, so no get_limits.
  t.same(await listed(KEYS.reader), ['payments_request', 'get_transaction', 'get_approval', 'list_approvals'])
  // idle: no rule at all, so no request tool; the look-ups show its own approvals (none).
  t.same(await listed(KEYS.idle), ['get_approval', 'list_approvals'])
  // limited: sandbox fiat GET of any path.
  t.same(await listed(KEYS.limited), ['payments_request', 'get_transaction', 'get_approval', 'list_approvals'])
})

t.test('the 2025 handshake lists the same tools (earlier revisions as the SDK negotiates them)', async (t) => {
  t.same(await listed(KEYS.reader, 'legacy'), await listed(KEYS.reader))
})

t.test('a listed tool carries its schema, title and description for the agent', async (t) => {
  const { tools } = await (await connect(t, proxy, KEYS.agent)).listTools()
  const request = tools.find((tool) => tool.name === 'payments_request')
  t.match(request, { title: 'Call the payments API', inputSchema: { type: 'object', required: ['interface', 'method', 'path'], additionalProperties: false } })
  t.match(request?.description, /unique externalReference/)
  t.match(tools.find((tool) => tool.name === 'get_transaction'), { annotations: { readOnlyHint: true }, inputSchema: { required: ['transactionId'], additionalProperties: false } })
})

t.test('an unlisted or unknown tool is a JSON-RPC error, and nothing is sent', async (t) => {
  const reader = await connect(t, proxy, KEYS.reader)
  await t.rejects(reader.callTool({ name: 'send_payout', arguments: { body: {} } }), /Unknown tool: send_payout/)
  await t.rejects(reader.callTool({ name: 'crypto_balance', arguments: { walletId: 'w' } }), /Unknown tool: crypto_balance/)
  t.same(provider.upstreamRequests.filter((r) => r.url.includes('payouts') || r.url.includes('wallets')), [])
})

t.test('no tool decides an approval, by any name or any path, not even for an approver', async (t) => {
  const agent = await connect(t, proxy, KEYS.agent)
  const held = await call(agent, 'payments_request', { interface: 'fiat', method: 'POST', path: '/payouts', body: { amount: 150, currency: 'KES', externalReference: 'no-decider-1' } })
  t.equal(held.structuredContent['status'], 202)
  const id = (held.structuredContent['approval'] as { id: string }).id

  for (const key of [KEYS.treasurer, KEYS.agent]) {
    const client = await connect(t, proxy, key)
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    t.same(names.filter((name) => /approv|decid|reject|confirm/i.test(name)), ['get_approval', 'list_approvals'], 'only the look-ups')
    for (const name of ['approve', 'approve_approval', 'decide_approval', 'reject_approval', 'approvals_approve', 'approval.approve', 'get_approval/approve']) {
      await t.rejects(client.callTool({ name, arguments: { id, by: 'me' } }), /Unknown tool/, `${name} is no tool`)
    }
  }
  // The request tool reaches only below an interface base: the decision routes are out of its reach.
  for (const path of ['/../../approvals/x/approve', '/%2e%2e/%2e%2e/approvals/x/approve']) {
    assertToolError(t, await call(agent, 'payments_request', { interface: 'fiat', method: 'POST', path: path.replace('x', id), body: { by: 'me' } }), 400, 'INVALID_PATH', path)
  }
  const after = await fetch(`${proxy.url}/approvals/${id}`, { headers: { authorization: `Bearer ${KEYS.treasurer}` } })
  t.match(await after.json(), { approval: { status: 'pending' } }, 'still pending: nobody decided')
})
