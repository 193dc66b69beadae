/**
 * Operator tool paths (SPEC §13): a placeholder is filled by exactly one canonical segment (§3's
 * reader, unchanged) or refused naming the argument; a template the reader would refuse, or one that
 * names the token endpoint, is refused at load; and whether a rule's globs could admit some filling.
 */
import t from 'tap'
import { McpInvalidArgumentsError } from '../../src/errors.js'
import { couldMatch, fillTemplate, parseTemplate, type PathTemplate } from '../../src/mcp/path-template.js'

const plain = { allowDots: false }

function template (text: string, options = plain): PathTemplate {
  const read = parseTemplate(text, options)
  if (!read.ok) throw new Error(read.problem)
  return read.template
}

t.test('a placeholder takes one canonical segment, as written', async (t) => {
  const tx = template('/transactions/{transactionId}')
  t.equal(fillTemplate(tx, { transactionId: 'abc-123_X' }, plain), '/transactions/abc-123_X')
  t.equal(fillTemplate(template('/a/{x}/b/'), { x: 'y' }, plain), '/a/y/b/', 'a trailing slash is kept')
  t.equal(fillTemplate(template('/w/{x}'), { x: 'USDC.e' }, { allowDots: true }), '/w/USDC.e', 'inner dots with PROXY_PATH_ALLOW_DOTS')
  // BAD_INPUTS §13: a/b, .., x;y, an encoded slash; and every other spelling §3 would read otherwise.
  for (const value of ['a/b', '..', '.', 'x;y', '%2F', '%2f', '%2e%2e', '%41', 'a%20b', 'a b', '', 'payouts.json', '\\', 'ａ', 'x\n', '?q=1', '#f', 5, null, ['a']]) {
    const filled = fillTemplate(tx, { transactionId: value }, plain)
    t.ok(filled instanceof McpInvalidArgumentsError, `${JSON.stringify(value)} is refused`)
    if (filled instanceof McpInvalidArgumentsError) {
      t.equal(filled.code, 'MCP_INVALID_ARGUMENTS')
      t.match(filled.message, /^Invalid arguments: arguments\.transactionId must be one canonical path segment/, 'it names the argument')
    }
  }
  t.ok(fillTemplate(template('/w/{x}'), { x: '.hidden' }, { allowDots: true }) instanceof McpInvalidArgumentsError, 'never a leading dot')
})

t.test('templates refused at load, each with why', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['transactions', /must start with "\/"/],
    ['/a/{x}/{x}', /\{x\} appears twice/],
    ['/pay-{id}', /a placeholder must be a whole segment/],
    ['/a/{1x}', /a placeholder must be a whole segment/],
    ['/a/../b', /not a canonical path segment/],
    ['/a;b', /not a canonical path segment/],
    ['/a//b', /not a canonical path segment/],
    ['/auth/generate-bearer-token', /token endpoint/],
    ['/{env}/auth/Generate-Bearer-Token', /token endpoint/],
  ]
  for (const [text, problem] of cases) {
    const read = parseTemplate(text, plain)
    t.notOk(read.ok, text)
    if (!read.ok) t.match(read.problem, problem, text)
  }
  t.same(parseTemplate('/', plain), { ok: true, template: { segments: [], trailingSlash: false, placeholders: [] } }, 'the base itself')
})

t.test('could a rule\'s globs admit some filling (folded, * one segment, ** any)', async (t) => {
  const tx = template('/transactions/{transactionId}')
  const payouts = template('/V1/Payouts')
  const cases: Array<[PathTemplate, string[], boolean]> = [
    [tx, ['/transactions/*'], true],
    [tx, ['/transactions/**'], true],
    [tx, ['/**'], true],
    [tx, ['/transactions'], false],
    [tx, ['/transactions/abc'], true],
    [tx, ['/payouts/**'], false],
    [tx, ['/transactions/*/events'], false],
    [tx, ['/*/*'], true],
    [payouts, ['/v1/payouts/**'], true],
    [payouts, ['/v1/payouts/'], true],
    [payouts, ['/v1/pay*'], true],
    [payouts, ['/v1/payouts/*'], false],
    [payouts, ['/v2/**', '/v1/**'], true],
    [template('/'), ['/**'], true],
    [template('/'), ['/'], true],
  ]
  for (const [tpl, globs, expected] of cases) t.equal(couldMatch(tpl, globs), expected, `${JSON.stringify(tpl.segments)} ${JSON.stringify(globs)}`)
})
