/**
 * SPEC §13's result shapes from the inner request's answer, table-tested: status and body (parsed
 * when JSON within the reader's depth, else text), replayed from Idempotent-Replayed, approval only
 * for the proxy's own hold (a 202 pointing at /approvals/), payment from Payment-Id, errors from
 * 4xx/5xx, and no header at all.
 */
import t from 'tap'
import { errorResult, lookupResult, outcomeOf, requestResult, type InnerAnswer } from '../../src/mcp/tool-result.js'
import { ApprovalNotFoundError, McpInvalidArgumentsError } from '../../src/errors.js'

const json = (status: number, body: unknown, headers: Record<string, string> = {}): InnerAnswer =>
  ({ status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body: Buffer.from(JSON.stringify(body)) })
const approval = { id: 'apr_abc', status: 'pending', expiresAt: 1_800_000_000 }
/** Deeper than JSON.stringify's recursion reaches: as a value, the result could not be serialised. */
const DEEP = `${'['.repeat(5000)}${']'.repeat(5000)}`

t.test('request results: status and body, the same as JSON first, never a header', async (t) => {
  const cases: Array<[string, InnerAnswer, Record<string, unknown>, boolean | undefined, string]> = [
    ['forwarded JSON', json(200, { data: { transactionId: 't1' } }, { 'set-cookie': 'a=1', 'x-provider': 'y' }), { status: 200, body: { data: { transactionId: 't1' } } }, undefined, 'ok'],
    ['text body', { status: 200, headers: { 'content-type': 'text/plain' }, body: Buffer.from('pong') }, { status: 200, body: 'pong' }, undefined, 'ok'],
    ['JSON type, broken body', { status: 502, headers: { 'content-type': 'application/json' }, body: Buffer.from('{oops') }, { status: 502, body: '{oops' }, true, 'failed'],
    ['JSON nested 5,000 deep: its text', { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(DEEP) }, { status: 200, body: DEEP }, undefined, 'ok'],
    ['vendor JSON type', { status: 200, headers: { 'content-type': 'application/problem+json' }, body: Buffer.from('{"a":1}') }, { status: 200, body: { a: 1 } }, undefined, 'ok'],
    ['no body', { status: 204, headers: {}, body: Buffer.alloc(0) }, { status: 204, body: null }, undefined, 'ok'],
    ['replayed', json(200, { ok: 1 }, { 'idempotent-replayed': 'true' }), { status: 200, body: { ok: 1 }, replayed: true }, undefined, 'replayed'],
    ['payment id', json(200, { ok: 1 }, { 'payment-id': 'pay_1' }), { status: 200, body: { ok: 1 }, payment: { id: 'pay_1' } }, undefined, 'ok'],
    ['the proxy\'s refusal', json(403, { error: { code: 'AMOUNT_LIMIT_EXCEEDED', message: 'm' } }, { 'x-proxy-error': 'AMOUNT_LIMIT_EXCEEDED' }), { status: 403, body: { error: { code: 'AMOUNT_LIMIT_EXCEEDED', message: 'm' } } }, true, 'refused'],
    ['a provider 202 is not a hold', json(202, { approval }), { status: 202, body: { approval } }, undefined, 'ok'],
    ['a 202 elsewhere is not a hold', json(202, { approval }, { location: '/payouts/1' }), { status: 202, body: { approval } }, undefined, 'ok'],
  ]
  for (const [name, answer, structured, isError, outcome] of cases) {
    const result = requestResult(answer)
    t.same(result.structuredContent, structured, `${name}: structured content`)
    t.equal(result.isError, isError, `${name}: isError`)
    t.equal(result.content.length, 1, `${name}: one text block`)
    t.same(JSON.parse(result.content[0]?.text ?? ''), structured, `${name}: the text block is the same`)
    t.notMatch(JSON.stringify(result), /set-cookie|x-provider|x-proxy-error|idempotent-replayed|payment-id/i, `${name}: no header`)
    t.equal(outcomeOf(result), outcome, `${name}: outcome`)
  }
})

t.test('a hold: a 202 result with the approval and a second block telling the agent what to do', async (t) => {
  const result = requestResult(json(202, { approval }, { location: '/approvals/apr_abc' }))
  t.same(result.structuredContent, { status: 202, body: { approval }, approval })
  t.notOk(result.isError)
  t.equal(result.content.length, 2)
  const next = result.content[1]?.text ?? ''
  t.match(next, /a person must approve/)
  t.match(next, /get_approval with \{"id": "apr_abc"\}/)
  t.match(next, /same externalReference and the same body/)
  t.match(next, /2027-01-15T08:00:00.000Z/, 'the expiry, as a time')
  t.equal(outcomeOf(result), 'held')
})

t.test('look-ups: the body itself on success, the error shape otherwise; errors of the proxy\'s own', async (t) => {
  t.same(lookupResult(json(200, { payment: { id: 'pay_1' } })).structuredContent, { payment: { id: 'pay_1' } })
  const missing = lookupResult(json(404, { error: { code: 'PAYMENT_NOT_FOUND', message: 'm' } }))
  t.same(missing.structuredContent, { status: 404, body: { error: { code: 'PAYMENT_NOT_FOUND', message: 'm' } } })
  t.equal(missing.isError, true)
  const invalid = errorResult(new McpInvalidArgumentsError('arguments.id', 'is required'))
  t.same(invalid.structuredContent, { status: 400, body: { error: { code: 'MCP_INVALID_ARGUMENTS', message: 'Invalid arguments: arguments.id is required' } } })
  t.equal(outcomeOf(invalid), 'invalid_arguments')
  t.equal(outcomeOf(errorResult(new ApprovalNotFoundError())), 'refused')
})
