/** SPEC §16's decisions, table-tested: which earlier payout a payout repeats, and who answers it. */
import t from 'tap'
import { validateCallers } from '../../src/callers/callers-file.js'
import { foldPath, type CanonicalPath } from '../../src/routing/canonical-path.js'
import { applicableLimits, duplicateAnswer, isJudged, probableDuplicate } from '../../src/payouts/duplicate-decision.js'

const NOW = 1_800_000_000_000
const IN_FLIGHT = 35_000
const entry = (id: string, reference: string, agoMs: number): { id: string, reference: string, atMs: number } => ({ id, reference, atMs: NOW - agoMs })

t.test('the earlier payout a payout probably repeats', async (t) => {
  const pending = { state: 'pending', externalReference: 'r1', createdAt: 1_799_999_990 }
  const cases = [
    { label: 'none planned', candidates: [], want: null },
    { label: 'a pending one', candidates: [{ entry: entry('pay_1', 'r1', 10_000), payment: pending }], want: { id: 'pay_1', externalReference: 'r1', state: 'pending', createdAt: 1_799_999_990 } },
    { label: 'the same reference (a retry)', candidates: [{ entry: entry('pay_1', 'mine', 10_000), payment: { ...pending, externalReference: 'mine' } }], want: null },
    { label: 'a failed one', candidates: [{ entry: entry('pay_1', 'r1', 10_000), payment: { ...pending, state: 'failed' } }], want: null },
    ...['sending', 'unknown', 'stale', 'succeeded', 'unverified'].map((state) => ({ label: `a ${state} one`, candidates: [{ entry: entry('pay_1', 'r1', 10_000), payment: { ...pending, state } }], want: { id: 'pay_1', state } })),
    { label: 'one on its way (no payment yet)', candidates: [{ entry: entry('pay_2', 'r2', 1_000), payment: null }], want: { id: 'pay_2', externalReference: 'r2', state: 'sending', createdAt: Math.floor((NOW - 1_000) / 1000) } },
    { label: 'one planned long ago that never became a payment', candidates: [{ entry: entry('pay_2', 'r2', IN_FLIGHT), payment: null }], want: null },
    { label: 'the newest that is not failed', candidates: [{ entry: entry('pay_3', 'r3', 1_000), payment: { ...pending, state: 'failed' } }, { entry: entry('pay_1', 'r1', 5_000), payment: pending }], want: { id: 'pay_1' } },
  ]
  for (const { label, candidates, want } of cases) {
    const found = probableDuplicate('mine', candidates, NOW, IN_FLIGHT)
    if (want === null) t.equal(found, null, label)
    else t.match(found, want, label)
  }
})

t.test('who is judged, and who answers', async (t) => {
  const load = validateCallers({
    callers: [
      { id: 'agent', sources: ['127.0.0.1'], allow: [{}], amountLimits: [{ paths: ['/v1/payouts'], amount: '/amount', currency: '/currency', approveAbove: { KES: 1000 } }, { paths: ['/bulk/**'], amount: '/amount', currency: '/currency', perDay: { KES: 10 }, duplicates: 'allow' }] },
      { id: 'free', sources: ['10.0.0.1'], allow: [{}], duplicates: 'allow' },
    ],
  })
  if (!load.ok) throw new Error(load.problems.join('; '))
  const [agent, free] = load.callers
  if (agent === undefined || free === undefined) throw new Error('two callers')
  const at = (path: string): CanonicalPath => foldPath(path as CanonicalPath)
  t.ok(isJudged(null, []), 'the anonymous caller is judged')
  t.ok(isJudged(agent, applicableLimits(agent, at('/v1/payouts'))))
  t.notOk(isJudged(agent, applicableLimits(agent, at('/bulk/1'))), 'an entry with duplicates: allow that judges the path opts it out')
  t.notOk(isJudged(free, applicableLimits(free, at('/v1/payouts'))), 'a caller with duplicates: allow is never judged')
  t.equal(duplicateAnswer(applicableLimits(agent, at('/v1/payouts')), 'KES', true), 'hold')
  t.equal(duplicateAnswer(applicableLimits(agent, at('/v1/payouts')), 'KES', false), 'refuse', 'approvals off: refused')
  t.equal(duplicateAnswer(applicableLimits(agent, at('/v1/payouts')), 'UGX', true), 'refuse', 'no approveAbove for the currency: refused')
  t.equal(duplicateAnswer(applicableLimits(agent, at('/other')), 'KES', true), 'refuse', 'no entry judges the path: refused')
  const bad = validateCallers({ callers: [{ id: 'x', sources: ['127.0.0.1'], allow: [{}], duplicates: 'deny' }] })
  t.match(bad, { ok: false, problems: [/callers\[0\]\.duplicates.*"deny"/] }, 'anything but allow is refused, naming the caller')
})
