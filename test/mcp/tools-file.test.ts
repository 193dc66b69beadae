/**
 * The operator's tools file (SPEC §13): read like the callers file, every problem naming its field;
 * arguments checked against the tool's JSON Schema with the refusal naming the failing place; and the
 * shipped deploy/mcp-tools.yaml loads, each tool sourced and written for an agent.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parse as parseYaml } from 'yaml'
import { readToolsFile, validateTools } from '../../src/mcp/tools-file.js'
import { tempDir } from './mcp-rig.js'

const plain = { allowDots: false }
const tool = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'get_transaction',
  title: 'Look up a transaction',
  description: 'Reads one transaction.',
  interface: 'fiat',
  method: 'GET',
  path: '/transactions/{transactionId}',
  input: { type: 'object', properties: { transactionId: { type: 'string' } }, required: ['transactionId'] },
  ...over,
})
const problems = (document: unknown): string[] => {
  const load = validateTools(document, plain)
  return load.ok ? [] : load.problems
}

t.test('every problem names its field', async (t) => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['not a list', { tools: {} }, /^tools: must be a list/],
    ['an unknown field', { tools: [tool({ url: '/x' })] }, /^tools\[0\]\.url: is not a known field/],
    ['a missing title', { tools: [Object.fromEntries(Object.entries(tool()).filter(([k]) => k !== 'title'))] }, /^tools\[0\]\.title: is required/],
    ['a bad name', { tools: [tool({ name: 'get transaction' })] }, /^tools\[0\]\.name: must match/],
    ['a bad method', { tools: [tool({ method: 'FETCH' })] }, /^tools\[0\]\.method: "FETCH" is not an HTTP method/],
    ['a bad interface', { tools: [tool({ interface: 'bank' })] }, /^tools\[0\]\.interface: "bank" is not an interface/],
    ['a built-in name', { tools: [tool({ name: 'payments_request' })] }, /^tools\[0\]\.name: "payments_request" is a tool of the proxy's own/],
    ['an approval decider cannot even be named like the proxy\'s own tools', { tools: [tool({ name: 'get_approval' })] }, /^tools\[0\]\.name: "get_approval" is a tool of the proxy's own/],
    ['a repeated name', { tools: [tool(), tool()] }, /^tools\[1\]\.name: "get_transaction" is not unique/],
    ['a dot segment', { tools: [tool({ path: '/a/../auth' })] }, /^tools\[0\]\.path: "\.\." is not a canonical path segment/],
    ['the token endpoint', { tools: [tool({ path: '/auth/generate-bearer-token', input: { type: 'object' } })] }, /^tools\[0\]\.path: names the provider's token endpoint/],
    ['an undeclared placeholder', { tools: [tool({ input: { type: 'object' } })] }, /^tools\[0\]\.input: the placeholder \{transactionId\} must be a property and required/],
    ['an optional placeholder', { tools: [tool({ input: { type: 'object', properties: { transactionId: { type: 'string' } } } })] }, /must be a property and required/],
    ['a reserved placeholder', { tools: [tool({ path: '/x/{body}', input: { type: 'object', properties: { body: {} }, required: ['body'] } })] }, /^tools\[0\]\.path: \{body\} is reserved/],
    ['an argument that goes nowhere', { tools: [tool({ input: { type: 'object', properties: { transactionId: { type: 'string' }, amount: {} }, required: ['transactionId'] } })] }, /^tools\[0\]\.input\.properties\.amount: is neither a placeholder/],
    ['not an object schema', { tools: [tool({ path: '/x', input: { type: 'array' } })] }, /^tools\[0\]\.input\.type: must be "object"/],
    ['not a JSON Schema', { tools: [tool({ input: { type: 'object', properties: { transactionId: { type: 'text' } }, required: ['transactionId'] } })] }, /^tools\[0\]\.input: is not a valid JSON Schema/],
    ['an unknown keyword', { tools: [tool({ input: { type: 'object', properties: { transactionId: { type: 'string', example: 'x' } }, required: ['transactionId'] } })] }, /^tools\[0\]\.input: is not a valid JSON Schema: strict mode: unknown keyword: "example"/],
  ]
  for (const [name, document, problem] of cases) {
    const found = problems(document)
    t.ok(found.some((p) => problem.test(p)), `${name}: ${found.join('; ')}`)
  }
  t.same(problems({ tools: [tool(), tool({ name: 'other', environment: 'production' })] }), [], 'a valid file')
})

t.test('read from disk: YAML or JSON, problems prefixed with the file, a repeated member refused', async (t) => {
  const dir = tempDir(t)
  const yaml = join(dir, 'tools.yaml')
  writeFileSync(yaml, 'tools:\n  - name: x\n    title: t\n    description: d\n    interface: fiat\n    method: GET\n    path: /a\n    input: { type: object }\n')
  const load = readToolsFile(yaml, plain)
  t.ok(load.ok)
  if (load.ok) t.same(load.tools.map((x) => [x.name, x.environment, x.input]), [['x', null, { type: 'object', additionalProperties: false }]], 'unknown members refused unless the schema says otherwise')
  const json = join(dir, 'tools.json')
  writeFileSync(json, '{"tools":[],"tools":[]}')
  t.same(readToolsFile(json, plain), { ok: false, problems: [`${json}: not valid JSON: a member name is repeated in one object`] })
  const missing = readToolsFile(join(dir, 'nope.yaml'), plain)
  t.match(missing.ok ? '' : missing.problems[0], /^PROXY_MCP_TOOLS_FILE: cannot read .*nope\.yaml \(ENOENT: no such file\)$/)
  writeFileSync(yaml, 'tools:\n  - name: [\n')
  const broken = readToolsFile(yaml, plain)
  t.match(broken.ok ? '' : broken.problems[0], /tools\.yaml: not valid YAML at line \d+, column \d+/)
})

t.test('arguments checked against the schema, the refusal naming the failing place', async (t) => {
  const load = validateTools({
    tools: [tool({
      name: 'send_payout',
      method: 'POST',
      path: '/payouts',
      input: {
        type: 'object',
        properties: { body: { type: 'object', properties: { amount: { type: 'number' }, externalReference: { type: 'string', minLength: 1 }, lines: { type: 'array', items: { type: 'string' } } }, required: ['amount', 'externalReference'] } },
        required: ['body'],
      },
    })],
  }, plain)
  if (!load.ok) throw new Error(load.problems.join('; '))
  const check = load.tools[0]?.check ?? (() => null)
  const cases: Array<[unknown, string | null]> = [
    [{ body: { amount: 1, externalReference: 'r' } }, null],
    [{}, 'Invalid arguments: arguments.body is required'],
    [{ body: { amount: 1 } }, 'Invalid arguments: arguments.body.externalReference is required'],
    [{ body: { amount: '1', externalReference: 'r' } }, 'Invalid arguments: arguments.body.amount must be number'],
    [{ body: { amount: 1, externalReference: '' } }, 'Invalid arguments: arguments.body.externalReference must NOT have fewer than 1 characters'],
    [{ body: { amount: 1, externalReference: 'r', lines: ['a', 2] } }, 'Invalid arguments: arguments.body.lines[1] must be string'],
    [{ body: { amount: 1, externalReference: 'r' }, extra: true }, 'Invalid arguments: arguments.extra is not an argument of this tool'],
  ]
  for (const [args, message] of cases) t.equal(check(args as Record<string, unknown>)?.message ?? null, message, JSON.stringify(args))
})

t.test('the shipped tools file loads; every tool names its source page, and money movers ask for a reused externalReference', async (t) => {
  const file = new URL('../../deploy/mcp-tools.yaml', import.meta.url).pathname
  const load = readToolsFile(file, plain)
  t.ok(load.ok, load.ok ? 'loads' : load.problems.join('; '))
  if (!load.ok) return
  const text = readFileSync(file, 'utf8')
  const entries = (parseYaml(text) as { tools: Array<{ name: string }> }).tools
  t.ok(load.tools.length >= 4, `${load.tools.length} tools`)
  for (const entry of load.tools) {
    const above = text.slice(0, text.indexOf(`- name: ${entry.name}`)).split('\n  - name:').at(-1) ?? ''
    t.match(above, /# (source|body and answer): https:\/\/docs\.honeycoin\.app\//, `${entry.name} names the provider's page it comes from`)
    t.ok(entry.description.length > 80, `${entry.name}: a description written for an agent`)
    const body = (entry.input['properties'] as Record<string, { properties?: Record<string, unknown> }> | undefined)?.['body']
    if (body?.properties?.['externalReference'] !== undefined) {
      t.match(entry.description, /externalReference/, `${entry.name}: mentions externalReference`)
      t.match(entry.description, /unique/i, `${entry.name}: unique`)
      t.match(entry.description, /same externalReference/i, `${entry.name}: reused on a retry`)
    }
  }
  t.equal(entries.length, load.tools.length)
  t.ok(load.tools.some((x) => x.name === 'send_payout' && x.method === 'POST'), 'a payout')
  t.ok(load.tools.some((x) => x.name === 'get_transaction' && x.method === 'GET' && x.template.placeholders.includes('transactionId')), 'a transaction look-up')
})
