/**
 * One reading (SPEC §13, round 5; issue 56 item 4): /mcp reads its body once. A batch behind a
 * UTF-8 byte-order mark ran as tool calls (the endpoint's parse failed on the BOM, then the SDK's
 * own reading stripped it and served the batch), and a tool call whose body is 5,000 levels deep
 * was a 500 (JSON.stringify recursed past the stack) where the same request over HTTP is 400
 * AMOUNT_UNREADABLE. Every row goes raw to /mcp and, the same bytes, over plain HTTP as a payout's
 * body; the deep bodies also as tool calls through the official client, as deep as it can write.
 */
import { gzipSync } from 'node:zlib'
import t from 'tap'
import { rawRequest } from '../helpers/raw-http.js'
import { KEYS, assertToolError, call, connect, startMcpRig } from './mcp-rig.js'

const { proxy, provider } = await startMcpRig(t)
const agent = await connect(t, proxy, KEYS.agent)

type Structured = Parameters<typeof assertToolError>[1]

const message = (id: number): Record<string, unknown> =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'payments_request', arguments: { interface: 'fiat', method: 'GET', path: `/transactions/one-reading-${id}` } } })
const BATCH = JSON.stringify([message(1), message(2)])
const BOM = '\ufeff'
const bytes = (...parts: Array<string | number[] | Buffer>): Buffer =>
  Buffer.concat(parts.map((p) => typeof p === 'string' ? Buffer.from(p) : Buffer.from(p)))
/** The text with `inserted` after `marker`, inside the string that holds it. */
const insideString = (text: string, marker: string, inserted: number[]): [string, number[], string] => {
  const at = text.indexOf(marker) + marker.length
  return [text.slice(0, at), inserted, text.slice(at)]
}
const utf16be = (text: string): Buffer => Buffer.from(text, 'utf16le').swap16()
const utf32 = (text: string, order: 'le' | 'be'): Buffer => Buffer.concat([...text].map((c) => {
  const unit = Buffer.alloc(4)
  if (order === 'le') unit.writeUInt32LE(c.codePointAt(0) ?? 0)
  else unit.writeUInt32BE(c.codePointAt(0) ?? 0)
  return unit
}))

async function overMcp (body: Buffer, headers: Record<string, string> = {}): Promise<{ status: number, text: string }> {
  const res = await fetch(`${proxy.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEYS.agent}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
    signal: AbortSignal.timeout(10_000),
  })
  return { status: res.status, text: await res.text() }
}

async function overHttp (target: string, body: Buffer, headers: string[] = []): Promise<{ status: number, code: string | null }> {
  const head = [`POST ${target} HTTP/1.1`, 'Host: 127.0.0.1', `Authorization: Bearer ${KEYS.agent}`, 'Content-Type: application/json', ...headers, `Content-Length: ${body.length}`, 'Connection: close']
  const res = await rawRequest(proxy.port, Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body]), 20_000)
  return { status: res.status, code: res.headers['x-proxy-error'] ?? null }
}

/** The tool result of a JSON-RPC answer, sent whole as JSON or as the one event of a stream. */
function toolResultOf (text: string): Structured {
  const json = text.startsWith('{') ? text : (text.split('\n').find((line) => line.startsWith('data: ')) ?? '').slice('data: '.length)
  return (JSON.parse(json) as { result: Structured }).result
}

/** A served batch answers as a stream of events: reported as its text, not thrown. */
function jsonOrText (text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

function sentToProvider (fragment: string): number {
  return provider.upstreamRequests.filter((r) => r.url.includes(fragment)).length
}

t.test('a batch or an envelope the SDK would repair, in any spelling: -32700 or -32600 over MCP, AMOUNT_UNREADABLE over HTTP, nothing sent', async (t) => {
  const PARSE_ERROR = -32700
  const BATCH_REFUSED = -32600
  const cases: Array<[string, Buffer, number, Record<string, string>?]> = [
    ['a batch behind a UTF-8 BOM', bytes(BOM, BATCH), PARSE_ERROR],
    ['one message behind a UTF-8 BOM', bytes(BOM, JSON.stringify(message(3))), PARSE_ERROR],
    ['a batch behind two UTF-8 BOMs', bytes(BOM, BOM, BATCH), PARSE_ERROR],
    ['a batch behind whitespace, then a BOM', bytes(' \r\n', BOM, BATCH), PARSE_ERROR],
    ['a batch in UTF-16LE behind its BOM', bytes([0xff, 0xfe], Buffer.from(BATCH, 'utf16le')), PARSE_ERROR],
    ['a batch in UTF-16BE behind its BOM', bytes([0xfe, 0xff], utf16be(BATCH)), PARSE_ERROR],
    ['a batch in UTF-16LE without a BOM', Buffer.from(BATCH, 'utf16le'), PARSE_ERROR],
    ['a batch in UTF-16 declared as charset=utf-16', bytes([0xfe, 0xff], utf16be(BATCH)), PARSE_ERROR, { 'content-type': 'application/json; charset=utf-16' }],
    ['a batch in UTF-32LE behind its BOM', bytes([0xff, 0xfe, 0, 0], utf32(BATCH, 'le')), PARSE_ERROR],
    ['a batch in UTF-32BE behind its BOM', bytes([0, 0, 0xfe, 0xff], utf32(BATCH, 'be')), PARSE_ERROR],
    ['a batch gzip-compressed', gzipSync(BATCH), PARSE_ERROR, { 'content-encoding': 'gzip' }],
    ['a batch after a no-break space', bytes('\u00a0', BATCH), PARSE_ERROR],
    ['a batch after a line separator', bytes('\u2028', BATCH), PARSE_ERROR],
    ['one message with invalid UTF-8 in its path, which a decoder would replace', bytes(...insideString(JSON.stringify(message(4)), 'one-reading-4', [0xc3, 0x28])), PARSE_ERROR],
    ['a batch after JSON whitespace', bytes(' \t\r\n', BATCH), BATCH_REFUSED],
    ['a batch of one', bytes(`[${JSON.stringify(message(5))}]`), BATCH_REFUSED],
    ['an empty batch', bytes('[]'), BATCH_REFUSED],
  ]
  for (const [label, body, code, headers = {}] of cases) {
    const before = sentToProvider('one-reading')
    const mcp = await overMcp(body, headers)
    t.equal(mcp.status, 400, `${label}: 400 over MCP`)
    t.match(jsonOrText(mcp.text), { jsonrpc: '2.0', id: null, error: { code } }, `${label}: JSON-RPC error ${code}`)
    const http = await overHttp('/sandbox/fiat/payouts', body, Object.entries(headers).filter(([name]) => name !== 'content-type').map(([name, value]) => `${name}: ${value}`))
    t.same(http, { status: 400, code: 'AMOUNT_UNREADABLE' }, `${label}: 400 AMOUNT_UNREADABLE over HTTP`)
    t.equal(sentToProvider('one-reading'), before, `${label}: nothing sent`)
  }
})

const deepArrays = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`
const deepObjects = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
const payout = (reference: string, inner: string): string => `{"amount":5,"currency":"KES","externalReference":"${reference}","x":${inner}}`

t.test('a body too deep to read in a tool call: the tool error of the same request over HTTP, 400 AMOUNT_UNREADABLE, never a 500', async (t) => {
  const paymentsRequest = (body: string): string => `{"name":"payments_request","arguments":{"interface":"fiat","method":"POST","path":"/payouts","body":${body}}}`
  const sendPayout = (body: string): string => `{"name":"send_payout","arguments":{"body":${body}}}`
  const cases: Array<[string, (body: string) => string, string]> = [
    ['payments_request: a payout with a member 5,000 arrays deep', paymentsRequest, payout('deep-arrays', deepArrays(5000))],
    ['payments_request: a payout with a member 5,000 objects deep', paymentsRequest, payout('deep-objects', deepObjects(5000))],
    ['payments_request: a body that is 5,000 arrays deep', paymentsRequest, deepArrays(5000)],
    ['payments_request: a payout 200,000 deep, as deep as the body limit allows', paymentsRequest, payout('deepest', deepArrays(200_000))],
    ['send_payout (an operator tool): a payout with a member 5,000 arrays deep', sendPayout, payout('deep-operator', deepArrays(5000))],
  ]
  for (const [label, params, body] of cases) {
    const mcp = await overMcp(Buffer.from(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":${params(body)}}`))
    t.equal(mcp.status, 200, `${label}: a JSON-RPC result over MCP`)
    assertToolError(t, toolResultOf(mcp.text), 400, 'AMOUNT_UNREADABLE', `${label}, over MCP`)
    t.same(await overHttp('/sandbox/fiat/payouts', Buffer.from(body)), { status: 400, code: 'AMOUNT_UNREADABLE' }, `${label}: the same over HTTP`)
  }
  t.equal(sentToProvider('/payouts'), 0, 'nothing sent')
  t.same(proxy.logs.records.filter((r) => r['msg'] === 'tool call failed'), [], 'no tool call failed')
})

t.test('through the official client, as deep as it can write: AMOUNT_UNREADABLE in the tool error, the same over HTTP', async (t) => {
  const body = payout('client-deep', deepArrays(2000))
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['payments_request', 'payments_request', { interface: 'fiat', method: 'POST', path: '/payouts', body: JSON.parse(body) as unknown }],
    ['send_payout', 'send_payout', { body: JSON.parse(body) as unknown }],
  ]
  for (const [label, tool, args] of cases) assertToolError(t, await call(agent, tool, args), 400, 'AMOUNT_UNREADABLE', `${label} over MCP`)
  t.same(await overHttp('/sandbox/fiat/payouts', Buffer.from(body)), { status: 400, code: 'AMOUNT_UNREADABLE' }, 'the same over HTTP')
  t.equal(sentToProvider('/payouts'), 0, 'nothing sent')
})

t.test('a deep body no rule reads is forwarded as it was written, the same bytes both ways', async (t) => {
  const body = ` ${deepArrays(5000)} `.replace('[[', '[ [')
  const mcp = await overMcp(Buffer.from(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"payments_request","arguments":{"interface":"fiat","method":"POST","path":"/transactions/deep-mcp","body":${body}}}}`))
  const result = toolResultOf(mcp.text)
  const http = await overHttp('/sandbox/fiat/transactions/deep-http', Buffer.from(body.trim()))
  t.same([result.structuredContent['status'], result.isError ?? false], [http.status, false], 'the same status, not an error')
  const sent = (fragment: string): string[] => provider.upstreamRequests.filter((r) => r.url.includes(fragment)).map((r) => r.body.toString('utf8'))
  t.same(sent('deep-mcp'), [body.trim()], 'over MCP the provider received the body as the agent wrote it')
  t.same(sent('deep-http'), [body.trim()], 'and the same over HTTP')
})

t.test('after all of it, the proxy still serves', async (t) => {
  t.ok((await agent.listTools()).tools.length > 0)
})
