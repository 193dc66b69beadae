/**
 * SPEC §13 `payments_request` and an operator tool with the official client over real sockets, each
 * outcome through the proxy's own checks: forwarded, refused, held (a 202 telling the agent what to
 * do), replayed, 422; a person's approval over HTTP and the agent's same call then getting the
 * provider's answer; no response header reaching the agent; one rate-limit count per tool call and
 * none per /mcp request; the access line's via and tool; mcp_tool_calls_total; no secret logged.
 */
import t from 'tap'
import { eventually } from '../helpers/eventually.js'
import { KEYS, assertToolError, call, connect, received, startMcpRig } from './mcp-rig.js'

const rig = await startMcpRig(t)
const { proxy, provider } = rig
const agent = await connect(t, proxy, KEYS.agent)
const payout = (over: Record<string, unknown> = {}): Record<string, unknown> => ({ interface: 'fiat', method: 'POST', path: '/payouts', body: { amount: 50, currency: 'KES', externalReference: 'pr-1', ...over } })

t.test('forwarded: the provider\'s status and body; what it received is the request the arguments describe', async (t) => {
  const result = await call(agent, 'payments_request', { environment: 'sandbox', interface: 'fiat', method: 'GET', path: '/transactions/tx-1', query: { expand: 'events', note: 'a b&c' } })
  t.notOk(result.isError)
  t.match(result.structuredContent, { status: 200, body: { success: true, method: 'GET', path: '/transactions/tx-1', query: 'expand=events&note=a%20b%26c' } })
  t.same(JSON.parse((result.content[0] as { text: string }).text), result.structuredContent)
  const sent = await call(agent, 'payments_request', payout())
  t.match(sent.structuredContent, { status: 200, body: { method: 'POST', path: '/payouts', body: JSON.stringify({ amount: 50, currency: 'KES', externalReference: 'pr-1' }) } })
  t.same(received(provider, '/payouts').map((r) => r.body), [JSON.stringify({ amount: 50, currency: 'KES', externalReference: 'pr-1' })])
  t.equal(provider.upstreamRequests.at(-1)?.headers['content-type'], 'application/json')
})

t.test('no response header reaches the agent; the provider\'s body passes as sent, token-shaped strings included', async (t) => {
  const result = await call(agent, 'payments_request', { interface: 'fiat', method: 'GET', path: '/transactions/tx-2' })
  const text = JSON.stringify(result)
  // The fake provider answers with `x-fake-upstream` and a cookie; the proxy's answer has its own x-request-id.
  t.notMatch(text, /x-fake-upstream|set-cookie|fake=1/i, 'no header of the answer')
  t.same(Object.keys(result.structuredContent).sort(), ['body', 'status'])
  // The fake provider echoes the request's headers in its body, Bearer token included: a provider's
  // body is the provider's, and passes unchanged.
  const body = result.structuredContent['body'] as { headers: Record<string, string> }
  t.match(body.headers['authorization'], /^Bearer eyJ/, 'the body as the provider sent it')
  t.equal(body.headers['user-agent'], 'payments-auth-proxy (MCP tool call)')
})

t.test('replayed: the same reference and body again is the recorded answer, replayed, nothing sent', async (t) => {
  const before = received(provider, '/payouts').length
  const again = await call(agent, 'payments_request', payout())
  t.match(again.structuredContent, { status: 200, replayed: true, body: { path: '/payouts' } })
  t.equal(received(provider, '/payouts').length, before)
})

t.test('422: the same reference with another body', async (t) => {
  const before = received(provider, '/payouts').length
  assertToolError(t, await call(agent, 'payments_request', payout({ amount: 60 })), 422, 'IDEMPOTENCY_KEY_REUSED')
  t.equal(received(provider, '/payouts').length, before)
})

t.test('refused by a rule: the contract\'s code and message as a tool error, nothing sent', async (t) => {
  const before = provider.upstreamRequests.length
  const over = assertToolError(t, await call(agent, 'payments_request', payout({ amount: 500, externalReference: 'pr-big' })), 403, 'AMOUNT_LIMIT_EXCEEDED')
  t.match(over.message, /per-request limit/)
  assertToolError(t, await call(agent, 'payments_request', { environment: 'production', interface: 'fiat', method: 'GET', path: '/transactions/x' }), 403, 'CALLER_NOT_PERMITTED')
  assertToolError(t, await call(agent, 'payments_request', payout({ amount: '1e3', externalReference: 'pr-exp' })), 400, 'AMOUNT_UNREADABLE')
  assertToolError(t, await call(agent, 'payments_request', { interface: 'fiat', method: 'POST', path: '/payouts', body: { amount: 150, currency: 'KES' } }), 400, 'EXTERNAL_REFERENCE_REQUIRED', 'a held request needs a reference')
  t.equal(provider.upstreamRequests.length, before)
})

t.test('held, approved by a person over HTTP, then the same call gets the provider\'s answer', async (t) => {
  const request = payout({ amount: 150, externalReference: 'pr-held' })
  const held = await call(agent, 'payments_request', request)
  t.notOk(held.isError, 'a hold is not an error')
  t.match(held.structuredContent, { status: 202, approval: { status: 'pending', caller: 'payout-agent', amount: '150', currency: 'KES', externalReference: 'pr-held' } })
  t.match((held.content[1] as { text: string }).text, /a person must approve/)
  const id = (held.structuredContent['approval'] as { id: string }).id
  t.same(received(provider, '/payouts').filter((r) => r.body.includes('pr-held')), [], 'nothing sent while pending')
  t.match((await call(agent, 'get_approval', { id })).structuredContent, { approval: { id, status: 'pending' } })
  t.match((await call(agent, 'list_approvals', { status: 'pending' })).structuredContent, { approvals: [{ id }] })
  t.match((await call(agent, 'payments_request', request)).structuredContent, { status: 202, approval: { id } }, 'the same call while pending: the same 202')

  const decided = await fetch(`${proxy.url}/approvals/${id}/approve`, { method: 'POST', headers: { authorization: `Bearer ${KEYS.treasurer}`, 'content-type': 'application/json' }, body: JSON.stringify({ by: 'Ann' }) })
  t.equal(decided.status, 200)
  await eventually(() => received(provider, '/payouts').some((r) => r.body.includes('pr-held')), { what: 'the approved payout sent', timeoutMs: 5000 })
  let answer: Record<string, unknown> = {}
  await eventually(async () => {
    answer = (await call(agent, 'payments_request', request)).structuredContent
    return answer['replayed'] === true
  }, { what: 'the recorded answer', timeoutMs: 5000 })
  t.match(answer, { status: 200, replayed: true, body: { success: true, path: '/payouts' } })
  t.equal(received(provider, '/payouts').filter((r) => r.body.includes('pr-held')).length, 1, 'sent once')
  t.match((await call(agent, 'get_approval', { id })).structuredContent, { approval: { id, status: 'approved', decidedBy: 'Ann', decidedByCaller: 'treasurer' } })
})

t.test('look-ups keep to §11\'s visibility: another caller\'s approval does not exist for an agent', async (t) => {
  const reader = await connect(t, proxy, KEYS.reader)
  const mine = (await call(agent, 'list_approvals', {})).structuredContent['approvals'] as Array<{ id: string }>
  t.ok(mine.length > 0)
  assertToolError(t, await call(reader, 'get_approval', { id: mine[0]?.id }), 404, 'APPROVAL_NOT_FOUND')
  t.same((await call(reader, 'list_approvals', {})).structuredContent, { approvals: [] })
  const treasurer = await connect(t, proxy, KEYS.treasurer)
  t.ok(((await call(treasurer, 'list_approvals', {})).structuredContent['approvals'] as unknown[]).length >= mine.length, 'an approver lists all')
  assertToolError(t, await call(agent, 'get_approval', { id: 'apr_doesNotExist' }), 404, 'APPROVAL_NOT_FOUND')
})

t.test('an operator tool: its placeholder filled by one canonical segment; its schema refuses the rest', async (t) => {
  const found = await call(agent, 'get_transaction', { transactionId: 'TX-9_a' })
  t.match(found.structuredContent, { status: 200, body: { method: 'GET', path: '/transactions/TX-9_a' } })
  const before = provider.upstreamRequests.length
  // BAD_INPUTS §13: a/b, .., x;y, an encoded slash.
  for (const transactionId of ['a/b', '..', 'x;y', '%2F', '%2e%2e']) {
    const refusal = assertToolError(t, await call(agent, 'get_transaction', { transactionId }), 400, 'MCP_INVALID_ARGUMENTS', transactionId)
    t.match(refusal.message, /arguments\.transactionId/)
  }
  // Wrong type, extra members, a missing argument.
  t.match(assertToolError(t, await call(agent, 'get_transaction', { transactionId: 5 }), 400, 'MCP_INVALID_ARGUMENTS').message, /arguments\.transactionId must be string/)
  t.match(assertToolError(t, await call(agent, 'get_transaction', { transactionId: 'a', limit: 1 }), 400, 'MCP_INVALID_ARGUMENTS').message, /arguments\.limit is not an argument of this tool/)
  t.match(assertToolError(t, await call(agent, 'send_payout', { body: { amount: 5, currency: 'KES' } }), 400, 'MCP_INVALID_ARGUMENTS').message, /arguments\.body\.externalReference is required/)
  t.match(assertToolError(t, await call(agent, 'payments_request', { interface: 'bank', method: 'GET', path: '/x' }), 400, 'MCP_INVALID_ARGUMENTS').message, /arguments\.interface must be equal to one of the allowed values/)
  t.equal(provider.upstreamRequests.length, before, 'nothing sent')
  const sent = await call(agent, 'send_payout', { body: { amount: 20, currency: 'KES', externalReference: 'op-1' } })
  t.match(sent.structuredContent, { status: 200, body: { path: '/payouts', body: '{"amount":20,"currency":"KES","externalReference":"op-1"}' } })
})

t.test('audit: the access line has via and tool; mcp_tool_calls_total counts by caller, tool and outcome', async (t) => {
  const lines = proxy.logs.records.filter((r) => r['msg'] === 'proxied request' && r['via'] === 'mcp')
  t.ok(lines.some((r) => r['tool'] === 'payments_request' && r['caller'] === 'payout-agent' && r['path'] === '/api/sandbox/b2b/transactions/tx-1'))
  t.ok(lines.some((r) => r['tool'] === 'get_transaction' && r['path'] === '/api/sandbox/b2b/transactions/TX-9_a'))
  const direct = await fetch(`${proxy.url}/sandbox/fiat/transactions/over-http`, { headers: { authorization: `Bearer ${KEYS.agent}` } })
  t.equal(direct.status, 200)
  await eventually(() => proxy.logs.records.some((r) => r['msg'] === 'proxied request' && r['path'] === '/api/sandbox/b2b/transactions/over-http'), { what: 'the HTTP request\'s access line' })
  t.match(proxy.logs.records.filter((r) => r['path'] === '/api/sandbox/b2b/transactions/over-http'), [{ caller: 'payout-agent', via: undefined, tool: undefined }], 'a request from the listener is never marked')
  const refusals = proxy.logs.records.filter((r) => r['msg'] === 'caller refused' && r['code'] === 'AMOUNT_LIMIT_EXCEEDED')
  t.match(refusals, [{ via: 'mcp', tool: 'payments_request', caller: 'payout-agent' }], 'a refusal line names the tool too')
  const metrics = await (await fetch(`${proxy.url}/metrics`)).text()
  const count = (labels: string): number => Number(new RegExp(`payments_auth_proxy_mcp_tool_calls_total\\{${labels}\\} (\\d+)`).exec(metrics)?.[1] ?? 0)
  t.ok(count('caller="payout-agent",tool="payments_request",outcome="ok"') >= 3)
  t.equal(count('caller="payout-agent",tool="payments_request",outcome="replayed"'), 2)
  t.ok(count('caller="payout-agent",tool="payments_request",outcome="held"') >= 2)
  t.ok(count('caller="payout-agent",tool="payments_request",outcome="refused"') >= 5)
  t.ok(count('caller="payout-agent",tool="get_transaction",outcome="invalid_arguments"') >= 7)
})

t.test('a tool call is one request for the rate limit; the /mcp requests around it are none', async (t) => {
  const limited = await connect(t, proxy, KEYS.limited)
  for (let i = 0; i < 5; i++) await limited.listTools()
  t.equal((await call(limited, 'payments_request', { interface: 'fiat', method: 'GET', path: '/balances' })).structuredContent['status'], 200)
  t.equal((await call(limited, 'get_transaction', { transactionId: 't' })).structuredContent['status'], 200)
  const third = assertToolError(t, await call(limited, 'payments_request', { interface: 'fiat', method: 'GET', path: '/balances' }), 429, 'CALLER_RATE_LIMITED')
  t.match(third.message, /rate limit/)
})

t.test('no caller key, token or API key in any log line', async (t) => {
  const secrets = [...Object.values(KEYS), ...provider.issuedTokens, ...Object.values(rig.proxy.config.environments).flatMap((e) => [e?.credentials.apiKey ?? '', e?.credentials.publicKey ?? ''])]
  t.ok(secrets.length > 8)
  for (const line of proxy.logs.lines) for (const secret of secrets) if (line.includes(secret)) t.fail(`a secret in: ${line.slice(0, 200)}`)
})
