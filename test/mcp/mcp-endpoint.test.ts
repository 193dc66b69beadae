/**
 * `/mcp` itself (SPEC §13; BAD_INPUTS "Agents over MCP"): §7's identity before anything runs (no key,
 * a revoked key, a key from outside its sources: 401 with WWW-Authenticate, nothing sent), §5's
 * Origin and Host rules, 405 for a GET, 413 past the limit, and malformed JSON-RPC (batches, broken
 * envelopes, arguments of the wrong shape) answered as JSON-RPC errors, the proxy still serving.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { assertProxyError } from '../helpers/proxy-error.js'
import { providerEnv, startProvider, startProxy } from '../helpers/harness.js'
import { rawRequest } from '../helpers/raw-http.js'
import { KEYS, assertToolError, call, callersYaml, connect, startMcpRig } from './mcp-rig.js'

const rig = await startMcpRig(t, { env: { PROXY_BODY_LIMIT_BYTES: '2048' } })
const { proxy, provider } = rig
const JSON_RPC_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const toolsCall = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'payments_request', arguments: { interface: 'fiat', method: 'GET', path: '/transactions/x' } } })
const post = async (body: string, headers: Record<string, string> = {}): Promise<Response> =>
  await fetch(`${proxy.url}/mcp`, { method: 'POST', headers: { ...JSON_RPC_HEADERS, ...headers }, body })
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` })

async function stillServing (t: Test): Promise<void> {
  t.ok((await (await connect(t, proxy, KEYS.agent)).listTools()).tools.length > 0, 'the proxy still serves')
}

t.test('no caller key, an unknown key, a key from outside its sources: 401 with WWW-Authenticate, before anything runs', async (t) => {
  const before = provider.upstreamRequests.length
  for (const [label, headers] of [['no key', {}], ['an unknown key', bearer('pak_unknown-0123456789abcdefghijklmnopqrstuvwxyz')], ['the fenced caller from 127.0.0.1', bearer(KEYS.fenced)], ['two keys', { authorization: `Bearer ${KEYS.agent}, Bearer ${KEYS.agent}` }]] as const) {
    const res = await post(toolsCall, headers)
    t.equal(res.headers.get('www-authenticate'), 'Bearer realm="payments-auth-proxy"', `${label}: WWW-Authenticate`)
    await assertProxyError(t, res, 401, 'CALLER_UNAUTHENTICATED', label)
  }
  await t.rejects(connect(t, proxy, null), 'the official client without a key cannot connect')
  t.equal(provider.upstreamRequests.length, before, 'nothing sent')
  t.ok(proxy.logs.records.some((r) => r['msg'] === 'caller refused' && r['code'] === 'CALLER_UNAUTHENTICATED'), 'logged at warn')
})

t.test('a key revoked while the agent is connected: its next call is 401', async (t) => {
  const reader = await connect(t, proxy, KEYS.reader)
  t.equal((await call(reader, 'get_transaction', { transactionId: 'before' })).structuredContent['status'], 200)
  const file = join(rig.dir, 'callers.yaml')
  writeFileSync(file, callersYaml().replace(/ {2}- id: reader\n(?: {4}.*\n)+/, ''))
  t.ok(proxy.callers?.reload('test'), 'reloaded without the reader')
  t.teardown(() => { writeFileSync(file, callersYaml()); proxy.callers?.reload('test') })
  await t.rejects(reader.callTool({ name: 'get_transaction', arguments: { transactionId: 'after' } }), /401|Unauthorized|CALLER_UNAUTHENTICATED/)
  t.notOk(provider.upstreamRequests.some((r) => r.url.endsWith('/after')), 'nothing sent')
})

t.test('§5: an Origin (a browser page) or a foreign Host is 403, whatever the key', async (t) => {
  await assertProxyError(t, await post(toolsCall, { ...bearer(KEYS.agent), origin: 'http://localhost:3000' }), 403, 'CLIENT_NOT_ALLOWED', 'Origin')
  const rebound = await rawRequest(proxy.port, `POST /mcp HTTP/1.1\r\nHost: attacker.example\r\nAuthorization: Bearer ${KEYS.agent}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(toolsCall)}\r\nConnection: close\r\n\r\n${toolsCall}`)
  await assertProxyError(t, rebound, 403, 'CLIENT_NOT_ALLOWED', 'DNS rebinding')
})

t.test('GET, DELETE and other methods: 405 with Allow: POST, after identity', async (t) => {
  for (const method of ['GET', 'DELETE', 'PUT']) {
    const res = await fetch(`${proxy.url}/mcp`, { method, headers: bearer(KEYS.agent) })
    t.equal(res.headers.get('allow'), 'POST', `${method}: Allow`)
    await assertProxyError(t, res, 405, 'METHOD_NOT_ALLOWED', method)
  }
  await assertProxyError(t, await fetch(`${proxy.url}/mcp`), 401, 'CALLER_UNAUTHENTICATED', 'GET without a key')
})

t.test('a body past the limit: 413 for the envelope, a tool error for the request body; still serving', async (t) => {
  const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'payments_request', arguments: { interface: 'fiat', method: 'POST', path: '/payouts', body: { pad: 'x'.repeat(2048 + 64 * 1024) } } } })
  await assertProxyError(t, await post(huge, bearer(KEYS.agent)), 413, 'BODY_TOO_LARGE', 'the envelope')
  const agent = await connect(t, proxy, KEYS.agent)
  assertToolError(t, await call(agent, 'payments_request', { interface: 'fiat', method: 'POST', path: '/payouts', body: { amount: 5, currency: 'KES', externalReference: 'big', pad: 'x'.repeat(3000) } }), 413, 'BODY_TOO_LARGE', 'the request body')
  t.notOk(provider.upstreamRequests.some((r) => r.body.includes('"big"')), 'nothing sent')
  await stillServing(t)
})

t.test('malformed JSON-RPC: batches, broken envelopes, arguments of the wrong shape are JSON-RPC errors; still serving', async (t) => {
  const cases: Array<[string, string]> = [
    ['a batch', JSON.stringify([JSON.parse(toolsCall), { ...JSON.parse(toolsCall), id: 2 }])],
    ['a batch after whitespace', ` \r\n\t[${toolsCall}]`],
    ['not JSON', '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '],
    ['not an object', '"tools/call"'],
    ['no method', '{"jsonrpc":"2.0","id":1}'],
    ['arguments not an object', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'payments_request', arguments: [1, 2] } })],
    ['an empty body', ''],
  ]
  const before = provider.upstreamRequests.length
  for (const [label, body] of cases) {
    const res = await post(body, bearer(KEYS.agent))
    const text = await res.text()
    t.ok(res.status >= 200 && res.status < 500, `${label}: answered (${res.status})`)
    t.match(text, /"jsonrpc":"2\.0"/, `${label}: a JSON-RPC message`)
    t.match(text, /"error":\{"code":-32\d{3}/, `${label}: a JSON-RPC error`)
  }
  t.equal(provider.upstreamRequests.length, before, 'nothing sent')
  await stillServing(t)
})

t.test('with PROXY_MCP off, /mcp is no route', async (t) => {
  const plain = await startProxy(t, providerEnv(await startProvider(t)))
  await assertProxyError(t, await fetch(`${plain.url}/mcp`, { method: 'POST', headers: JSON_RPC_HEADERS, body: toolsCall }), 404, 'ROUTE_NOT_FOUND')
})
