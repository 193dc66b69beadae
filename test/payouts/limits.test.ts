/**
 * SPEC §16's limits an agent can read: over generated sequences of payouts forwarded, held,
 * rejected and failed (some failures told twice, as two replicas would), the figures `limitsToday`
 * reads from the real memory store add up: used is what was forwarded and not given back, held what
 * is pending, and used + held + left is the day's limit.
 */
import fc from 'fast-check'
import t from 'tap'
import { dayTotalKey, toUnits, utcDay } from '../../src/callers/amount-limits.js'
import { validateCallers } from '../../src/callers/callers-file.js'
import { systemClock } from '../../src/clock.js'
import { limitsToday } from '../../src/payouts/limits.js'
import { createMemoryStore } from '../../src/state/memory-store.js'

const NOW = Date.UTC(2026, 11, 2, 14, 0, 0)
const load = validateCallers({ callers: [{ id: 'agent', sources: ['127.0.0.1'], allow: [{}], amountLimits: [{ amount: '/amount', currency: '/currency', perRequest: { KES: '500' }, perDay: { KES: '1000.50' }, approveAbove: { KES: 200 } }] }] })
if (!load.ok) throw new Error(load.problems.join('; '))
const caller = load.callers[0]
if (caller === undefined) throw new Error('one caller')
const key = dayTotalKey('agent', 0, 'KES', utcDay(NOW))
const PER_DAY = toUnits('1000.50', 'down') ?? 0n

type Step = { kind: 'send', cents: number } | { kind: 'reject' | 'fail', pick: number, twice: boolean }

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('send' as const), cents: fc.integer({ min: 1, max: 50_000 }) }),
  fc.record({ kind: fc.constantFrom('reject' as const, 'fail' as const), pick: fc.nat(), twice: fc.boolean() }),
)

t.test('used + held + left is the day\'s limit, whatever happened', async (t) => {
  await fc.assert(fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
    const store = createMemoryStore({ clock: systemClock })
    const forwarded: Array<{ id: number, units: bigint }> = []
    const pending: Array<{ id: number, units: bigint }> = []
    let next = 0
    for (const s of steps) {
      if (s.kind === 'send') {
        const units = BigInt(s.cents) * 1_000_000n
        if (!await store.reserve(key, units, PER_DAY, 86_400_000)) continue
        // Above approveAbove (200): held for a person, reserved like a forwarded one.
        ;(units > 200n * 100_000_000n ? pending : forwarded).push({ id: next++, units })
        continue
      }
      const list = s.kind === 'reject' ? pending : forwarded
      const chosen = list[s.pick % Math.max(1, list.length)]
      if (chosen === undefined) continue
      for (let i = 0; i < (s.twice ? 2 : 1); i++) await store.release(key, chosen.units, `${s.kind}:${chosen.id}`)
      list.splice(list.indexOf(chosen), 1)
    }
    const sum = (list: Array<{ units: bigint }>): bigint => list.reduce((n, p) => n + p.units, 0n)
    const held = new Map([[key, sum(pending)]])
    const [line] = limitsToday(caller, NOW, new Map([[key, await store.total(key)]]), held)
    if (line === undefined) return false
    const units = (text: string | null): bigint => toUnits(text ?? '0', 'down') ?? -1n
    return units(line.usedToday) === sum(forwarded) &&
      units(line.heldForApproval) === sum(pending) &&
      units(line.usedToday) + units(line.heldForApproval) + units(line.leftToday) === PER_DAY
  }), { numRuns: 200 })
  t.pass('200 generated sequences held it')
})

t.test('the shape: one line per entry and currency, limits as written, null where unset, resetsAt the next UTC midnight', async (t) => {
  const two = validateCallers({ callers: [{ id: 'a', sources: ['127.0.0.1'], allow: [{}], amountLimits: [{ paths: ['/v1/payouts'], amount: '/amount', currency: '/currency', perRequest: { KES: 500, USD: '10.50' }, approveAbove: { UGX: 1 } }] }] })
  if (!two.ok) throw new Error(two.problems.join('; '))
  const [a] = two.callers
  if (a === undefined) throw new Error('one caller')
  const resetsAt = Date.UTC(2026, 11, 3) / 1000
  t.same(limitsToday(a, NOW, new Map(), new Map()), [
    { paths: ['/v1/payouts'], currency: 'KES', perRequest: '500', perDay: null, approveAbove: null, usedToday: '0', heldForApproval: '0', leftToday: null, resetsAt },
    { paths: ['/v1/payouts'], currency: 'USD', perRequest: '10.50', perDay: null, approveAbove: null, usedToday: '0', heldForApproval: '0', leftToday: null, resetsAt },
    { paths: ['/v1/payouts'], currency: 'UGX', perRequest: null, perDay: null, approveAbove: '1', usedToday: '0', heldForApproval: '0', leftToday: null, resetsAt },
  ])
})
