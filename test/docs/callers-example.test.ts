/**
 * Issue 35 item 3, issue 43 item 14: one callers example everywhere. The README's request (POST
 * /fiat/v1/payouts with 100 KES) must be permitted, within its limits, by the worked examples of
 * docs/callers.md and docs/approvals.md and by deploy/callers.example.yaml, so an agent following
 * any two is not refused; and no example anywhere spells the payout path another way.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parseCallersText, readCallersFile, type CallerSpec } from '../../src/callers/callers-file.js'
import { firstMismatch } from '../../src/callers/judge-caller.js'
import { folded } from '../helpers/canonical.js'

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')

function readmeRequest (): { path: string, amount: string, currency: string } {
  const match = /curl -s -X POST http:\/\/localhost:8080\/fiat(\/\S+) \\\n[^\n]*\n\s+-d '(\{[^']*\})'/.exec(read('README.md'))
  if (match === null) throw new Error('the README\'s curl POST was not found')
  const body = JSON.parse(match[2] ?? '{}') as { amount: number, currency: string }
  return { path: match[1] ?? '', amount: String(body.amount), currency: body.currency }
}

function workedExample (): CallerSpec[] {
  const block = /2\. Add the caller[^\n]*\n\n\s*```yaml\n([\s\S]*?)\n\s*```/.exec(read('docs/callers.md'))?.[1]
  if (block === undefined) throw new Error('the worked example\'s YAML was not found')
  return parsed(block.split('\n').map((l) => l.replace(/^ {3}/, '')).join('\n'))
}

function approvalsExample (): CallerSpec[] {
  const block = /## Worked example[^\n]*\n\n```yaml\n([\s\S]*?)\n```/.exec(read('docs/approvals.md'))?.[1]
  if (block === undefined) throw new Error('docs/approvals.md\'s worked example was not found')
  return parsed(block)
}

/** A docs example's callers, its shortened keySha256 values ("9b1c...") padded to a real length. */
function parsed (yaml: string): CallerSpec[] {
  const load = parseCallersText(yaml.replace(/"?\b([0-9a-f]{4,})\.\.\."?/g, (_, hex: string) => `"${hex.padEnd(64, '0')}"`), '.yaml')
  if (!load.ok) throw new Error(load.problems.join('\n'))
  return load.callers
}

t.test('the README\'s payout is permitted and within the limits of every example', async (t) => {
  const request = readmeRequest()
  t.equal(request.path, '/v1/payouts')
  const example = readCallersFile(fileURLToPath(new URL('../../deploy/callers.example.yaml', import.meta.url)))
  if (!example.ok) throw new Error(example.problems.join('\n'))
  for (const [label, callers] of [['docs/callers.md', workedExample()], ['docs/approvals.md', approvalsExample()], ['deploy/callers.example.yaml', example.callers]] as const) {
    const agent = callers.find((c) => c.id === 'payout-agent')
    if (agent === undefined) { t.fail(`${label}: no payout-agent`); continue }
    const facts = { environment: 'sandbox', interface: 'fiat', method: 'POST', path: folded(request.path) }
    t.equal(firstMismatch(agent, facts), null, `${label}: POST /sandbox/fiat${request.path} is permitted`)
    t.equal(firstMismatch(agent, { ...facts, environment: 'production' }), 'environment', `${label}: production is not`)
    const limit = agent.amountLimits[0]
    t.ok(limit !== undefined && Number(limit.perRequest.get(request.currency)) >= Number(request.amount), `${label}: ${request.amount} ${request.currency} is within perRequest`)
    t.ok(limit?.paths === null || limit?.paths(folded(request.path)) === true, `${label}: the amount limit applies to it`)
  }
})

t.test('docs/approvals.md\'s held approval shows the README\'s path, for the example\'s agent', async (t) => {
  const block = /```json\n([\s\S]*?"approval"[\s\S]*?)\n\s*```/.exec(read('docs/approvals.md'))?.[1]
  if (block === undefined) throw new Error('docs/approvals.md\'s 202 body was not found')
  const { approval } = JSON.parse(block) as { approval: Record<string, string> }
  t.match(approval, { caller: 'payout-agent', environment: 'sandbox', interface: 'fiat', method: 'POST', path: readmeRequest().path })
})

/** The fenced blocks of a markdown text: the examples a reader copies (prose may name a wrong path to warn of it). */
function codeOf (markdown: string): string[] {
  return [...markdown.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1] ?? '')
}

t.test('every example spells the payout path as the README does (/v1/payouts)', async (t) => {
  const readme = readmeRequest().path
  const docs = ['README.md', ...readdirSync(new URL('../../docs/', import.meta.url), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
  const examples = [
    ...docs.flatMap((file) => codeOf(read(file)).map((code) => ({ file, code }))),
    ...['deploy/callers.example.yaml', 'config.example.env'].map((file) => ({ file, code: read(file) })),
  ]
  let seen = 0
  for (const { file, code } of examples) {
    for (const match of code.matchAll(/(\S*)\/payouts\b/g)) {
      seen++
      t.ok(`${match[1] ?? ''}/payouts`.endsWith(readme), `${file}: ${match[0]}`)
    }
  }
  t.ok(seen >= 8, `${seen} payout paths found`)
})
