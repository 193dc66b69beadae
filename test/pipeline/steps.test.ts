/**
 * The pipeline's order is data (src/pipeline/steps.ts): held here against SPEC §7's order of
 * checks (identity 401 → allow 403 → rateLimit 429 → requireExternalReference 400 → §8 → amount
 * limits), with §11's hold after the amount and §12's follow last, the refusals and the client
 * access before identity; and whatever order the core and the features add their steps in, they
 * are registered in that one.
 */
import fc from 'fast-check'
import t from 'tap'
import { orderSteps, STEP_ORDER, type PipelineStep, type StepName } from '../../src/pipeline/steps.js'

const at = (name: StepName): number => STEP_ORDER.indexOf(name)

t.test('the steps follow SPEC §7', async (t) => {
  const spec: StepName[] = ['refuse', 'access', 'identify', 'path', 'rules', 'idempotency', 'amount', 'hold', 'follow']
  for (let i = 1; i < spec.length; i++) {
    const [before, after] = [spec[i - 1], spec[i]] as [StepName, StepName]
    t.ok(at(before) < at(after), `${before} before ${after}`)
  }
  t.ok(at('retry') > at('idempotency') && at('retry') < at('amount'), 'a held request\'s retry after §8 and before the amount: it costs no amount')
  t.equal(STEP_ORDER[0], 'mark', 'a tool call is marked before anything logs')
  t.equal(new Set(STEP_ORDER).size, STEP_ORDER.length, 'each name once')
})

t.test('orderSteps registers any mix of steps in STEP_ORDER, whatever order they were added in', async (t) => {
  const step = (name: StepName): PipelineStep => ({ name, register: async () => {} })
  fc.assert(fc.property(fc.shuffledSubarray([...STEP_ORDER]), (names) => {
    const ordered = orderSteps(names.map(step)).map((s) => s.name)
    return ordered.every((name, i) => i === 0 || at(ordered[i - 1] as StepName) < at(name)) && ordered.length === names.length
  }))
  t.throws(() => orderSteps([step('hold'), step('amount'), step('hold')]), /pipeline step hold added twice/)
})
