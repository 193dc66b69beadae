/**
 * One code path (SPEC §13): a tool call meets exactly the checks an HTTP request of the same caller
 * meets. BAD_INPUTS' hostile paths get §3's refusal as a tool error, the one an HTTP request gets;
 * and, as a property over generated calls (callers, environments, interfaces, methods, path
 * spellings, queries, bodies above and below the limits), the outcome over MCP equals the outcome of
 * the same request sent raw over HTTP: the status, the error code, and what the provider received.
 */
import fc from 'fast-check'
import t from 'tap'
import { rawRequest } from '../helpers/raw-http.js'
import { KEYS, assertToolError, call, connect, startMcpRig } from './mcp-rig.js'

const { proxy, provider } = await startMcpRig(t)
const clients = { agent: await connect(t, proxy, KEYS.agent), reader: await connect(t, proxy, KEYS.reader) }

interface Outcome { status: number, code: string | null, sent: Array<{ method: string, url: string, body: string }> }

/** The request line's target of a call: what payments_request builds from its arguments. */
function targetOf (environment: string | undefined, iface: string, path: string, query: Record<string, string> | undefined): string {
  const qs = query === undefined ? '' : Object.entries(query).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')
  return `${environment === undefined ? '' : `/${environment}`}/${iface}${path}${qs === '' ? '' : `?${qs}`}`
}

async function overHttp (key: string, method: string, target: string, body: string | null): Promise<Outcome> {
  const before = provider.upstreamRequests.length
  const head = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', `Authorization: Bearer ${key}`, 'Connection: close']
  if (body !== null) head.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`)
  const res = await rawRequest(proxy.port, `${head.join('\r\n')}\r\n\r\n${body ?? ''}`)
  return { status: res.status, code: res.headers['x-proxy-error'] ?? null, sent: sentSince(before) }
}

async function overMcp (who: keyof typeof clients, args: Record<string, unknown>): Promise<Outcome> {
  const before = provider.upstreamRequests.length
  const result = await call(clients[who], 'payments_request', args)
  const body = result.structuredContent['body'] as { error?: { code?: string } } | null
  const own = result.isError === true && typeof body?.error?.code === 'string' ? body.error.code : null
  return { status: result.structuredContent['status'] as number, code: own, sent: sentSince(before) }
}

function sentSince (before: number): Outcome['sent'] {
  return provider.upstreamRequests.slice(before).map((r) => ({ method: r.method, url: r.url, body: r.body.toString('utf8') }))
}

t.test('hostile paths: §3\'s refusal as a tool error, the same as over HTTP, nothing sent', async (t) => {
  const cases: Array<[string, number, string]> = [
    ['/payouts;x=1', 400, 'PATH_NOT_CANONICAL'],
    ['/../auth/generate-bearer-token', 400, 'INVALID_PATH'],
    ['/%2e%2e/auth/generate-bearer-token', 400, 'INVALID_PATH'],
    ['/%252e%252e/payouts', 400, 'INVALID_PATH'],
    ['/payouts/..', 400, 'INVALID_PATH'],
    ['https://evil.example/payouts', 400, 'INVALID_PATH'],
    ['//evil.example/payouts', 400, 'INVALID_PATH'],
    ['/payouts%2Fx', 400, 'INVALID_PATH'],
    ['\\payouts', 400, 'INVALID_PATH'],
    ['/auth/generate-bearer-token', 403, 'TOKEN_ENDPOINT_BLOCKED'],
  ]
  for (const [path, status, code] of cases) {
    const mcp = await call(clients.agent, 'payments_request', { environment: 'sandbox', interface: 'fiat', method: 'GET', path })
    assertToolError(t, mcp, status, code, path)
    if (path.includes('\\')) continue
    const http = await overHttp(KEYS.agent, 'GET', targetOf('sandbox', 'fiat', path, undefined), null)
    t.same([http.status, http.code], [status, code], `${path}: the same over HTTP`)
  }
  t.same(provider.upstreamRequests.filter((r) => r.url.includes('evil') || r.url.includes('generate-bearer-token') || r.url.includes('payouts')), [], 'nothing sent')
})

t.test('property: for generated calls, the MCP outcome equals the same request\'s over HTTP by the same caller', async (t) => {
  let run = 0
  const segment = fc.constantFrom('payouts', 'Payouts', 'transactions', 'tx-1', 'balances', 'v1', 'a;b', '..', '%2e%2e', '%41', 'a.b', '', 'sandbox', 'generate-bearer-token', '%2F', 'x~y')
  // Mostly what the rules admit (so that forwarding and holds are compared too), the rest anything.
  const segments = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(['payouts'], ['Payouts'], ['transactions', 'tx-1'], ['transactions', 'TX-2'], ['payouts', 'p-1']) },
    { weight: 2, arbitrary: fc.array(segment, { minLength: 1, maxLength: 3 }) },
  )
  const anyCall = fc.record({
    who: fc.constantFrom('agent' as const, 'agent' as const, 'reader' as const),
    environment: fc.constantFrom(undefined, 'sandbox', 'sandbox', 'production'),
    iface: fc.constantFrom('fiat', 'fiat', 'fiat', 'crypto'),
    method: fc.constantFrom('GET', 'GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE'),
    segments,
    slash: fc.boolean(),
    query: fc.option(fc.dictionary(fc.constantFrom('page', 'state', 'q'), fc.constantFrom('1', 'pending', 'a b', 'é&=')), { nil: undefined }),
    body: fc.option(fc.record({ amount: fc.constantFrom(50, 50, 150, 500, '70', '1e3', -5), currency: fc.constantFrom('KES', 'KES', 'USD'), reference: fc.constantFrom(true, true, false) }), { nil: undefined, freq: 4 }),
  })
  // A payout the agent may make: alone, above approveAbove (held) or above perRequest.
  const payout = fc.record({
    who: fc.constant('agent' as const),
    environment: fc.constantFrom(undefined, 'sandbox'),
    iface: fc.constant('fiat'),
    method: fc.constant('POST'),
    segments: fc.constant(['payouts']),
    slash: fc.boolean(),
    query: fc.constant(undefined),
    body: fc.record({ amount: fc.constantFrom(50, 150, '150.5', 500, '70'), currency: fc.constant('KES'), reference: fc.constant(true) }),
  })
  const call = fc.oneof({ weight: 1, arbitrary: payout }, { weight: 2, arbitrary: anyCall })
  let refused = 0
  let forwarded = 0
  let held = 0
  await fc.assert(fc.asyncProperty(call, async (c) => {
    run++
    const path = `/${c.segments.join('/')}${c.slash ? '/' : ''}`
    const bodyFor = (side: string): Record<string, unknown> | undefined => c.body === undefined
      ? undefined
      : { amount: c.body.amount, currency: c.body.currency, ...(c.body.reference ? { externalReference: `prop-${run}-${side}` } : {}) }
    const args: Record<string, unknown> = { interface: c.iface, method: c.method, path }
    if (c.environment !== undefined) args['environment'] = c.environment
    if (c.query !== undefined) args['query'] = c.query
    const mcpBody = bodyFor('mcp')
    if (mcpBody !== undefined) args['body'] = mcpBody
    const mcp = await overMcp(c.who, args)
    const httpBody = bodyFor('http')
    const http = await overHttp(KEYS[c.who], c.method, targetOf(c.environment, c.iface, path, c.query), httpBody === undefined ? null : JSON.stringify(httpBody))
    if (mcp.code !== null) refused++
    else if (mcp.status === 202) held++
    else forwarded++
    const sameSent = (sent: Outcome['sent']): Outcome['sent'] => sent.map((s) => ({ ...s, body: s.body.replace(/prop-\d+-(mcp|http)/, 'prop-ref') }))
    t.same({ status: mcp.status, code: mcp.code, sent: sameSent(mcp.sent) }, { status: http.status, code: http.code, sent: sameSent(http.sent) }, `${c.who} ${c.method} ${targetOf(c.environment, c.iface, path, c.query)} ${JSON.stringify(c.body)}`)
    return mcp.status === http.status && mcp.code === http.code && JSON.stringify(sameSent(mcp.sent)) === JSON.stringify(sameSent(http.sent))
  }), { numRuns: 120, seed: 1345 })
  t.ok(refused > 20 && forwarded > 10 && held > 0, `both ways and held (${refused} refused, ${forwarded} forwarded, ${held} held)`)
})
