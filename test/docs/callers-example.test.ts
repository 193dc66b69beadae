/**
 * Issue 35 item 3: one callers example everywhere. The README's request (POST /fiat/v1/payouts with
 * 100 KES) must be permitted, within its limits, by the worked example of docs/callers.md and by
 * deploy/callers.example.yaml, so an agent following both is not refused.
 */
import { readFileSync } from 'node:fs'
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
  const yaml = block.split('\n').map((l) => l.replace(/^ {3}/, '')).join('\n').replace('"9b1c..."', `"${'9b1c'.padEnd(64, '0')}"`)
  const load = parseCallersText(yaml, '.yaml')
  if (!load.ok) throw new Error(load.problems.join('\n'))
  return load.callers
}

t.test('the README\'s payout is permitted and within the limits of both examples', async (t) => {
  const request = readmeRequest()
  t.equal(request.path, '/v1/payouts')
  const example = readCallersFile(fileURLToPath(new URL('../../deploy/callers.example.yaml', import.meta.url)))
  if (!example.ok) throw new Error(example.problems.join('\n'))
  for (const [label, callers] of [['docs/callers.md', workedExample()], ['deploy/callers.example.yaml', example.callers]] as const) {
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
