/**
 * Held marks (held-marks.ts): how long one lives, table-tested, and the writing of every stored
 * approval's mark at a start, on the real stores (an SQLite file, the memory state store).
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HeldMarks, heldMarkTtlMs } from '../../src/approvals/held-marks.js'
import { createSqliteApprovalStore } from '../../src/approvals/sqlite-approval-store.js'
import { createMemoryStore } from '../../src/state/memory-store.js'
import type { StateStore } from '../../src/state/state-store.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { approvalFixture } from './approval-fixture.js'

const DAY = 86_400_000

t.test('heldMarkTtlMs: a mark lives until its approval\'s retention ends, from its decision or, while pending, from its expiry', async (t) => {
  const cases: Array<[string, { decidedAtMs: number | null, expiresAtMs: number }, number, number, number]> = [
    ['pending, just held', { decidedAtMs: null, expiresAtMs: 1_000 + DAY }, 1_000, 7 * DAY, 8 * DAY],
    ['pending, half its time gone', { decidedAtMs: null, expiresAtMs: DAY }, DAY / 2, 7 * DAY, 7.5 * DAY],
    ['decided before its expiry: from the decision', { decidedAtMs: 10_000, expiresAtMs: DAY }, 10_000, 7 * DAY, 7 * DAY],
    ['decided, later', { decidedAtMs: 10_000, expiresAtMs: DAY }, 10_000 + DAY, 7 * DAY, 6 * DAY],
    ['past its retention: nothing left', { decidedAtMs: 0, expiresAtMs: DAY }, 7 * DAY + 1, 7 * DAY, -1],
    ['a longer retention (PROXY_IDEMPOTENCY_TTL_SECONDS)', { decidedAtMs: 0, expiresAtMs: DAY }, 0, 30 * DAY, 30 * DAY],
  ]
  for (const [name, approval, nowMs, retentionMs, expected] of cases) t.equal(heldMarkTtlMs(approval, nowMs, retentionMs), expected, name)
})

t.test('HeldMarks.writeAll marks every stored approval still kept, and only then calls itself complete', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pap-marks-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const approvals = await createSqliteApprovalStore(join(dir, 'webhooks.db'))
  t.teardown(() => approvals.close())
  const nowMs = 10 * DAY
  await approvals.create(approvalFixture({ id: 'apr_pending', key: 'k-pending', createdAtMs: nowMs - 1000, expiresAtMs: nowMs + DAY }))
  await approvals.create(approvalFixture({ id: 'apr_rejected', key: 'k-rejected', status: 'rejected', decidedAtMs: nowMs - DAY, forward: 'answered' }))
  await approvals.create(approvalFixture({ id: 'apr_old', key: 'k-old', status: 'rejected', decidedAtMs: nowMs - 8 * DAY, forward: 'answered' }))
  await approvals.create(approvalFixture({ id: 'apr_edge', key: 'k-edge', status: 'expired', decidedAtMs: nowMs - 7 * DAY, forward: 'answered' }))

  const clock = new FakeClock()
  const state = createMemoryStore({ clock })
  const marks = new HeldMarks()
  const held = async (store: StateStore, key: string): Promise<boolean> => {
    const claim = await store.claim(key, 1)
    return claim.kind === 'claimed' && claim.held
  }

  const down: StateStore = { ...state, markHeld: async () => { throw new Error('down') } }
  await t.rejects(marks.writeAll(approvals, down, nowMs, 7 * DAY), /down/)
  t.notOk(marks.complete, 'not complete while a mark could not be written')

  const asked: string[] = []
  const counting: StateStore = { ...state, markHeld: async (key, ttlMs) => { asked.push(key); await state.markHeld(key, ttlMs) } }
  await marks.writeAll(approvals, counting, nowMs, 7 * DAY)
  t.ok(marks.complete)
  t.same(asked.sort(), ['k-pending', 'k-rejected'], 'only the approvals still kept: none whose retention ended, to the millisecond')
  t.ok(await held(state, 'k-pending'), 'pending: marked')
  t.ok(await held(state, 'k-rejected'), 'decided within its retention: marked')
  t.notOk(await held(state, 'k-old'), 'past its retention: not marked')
  t.notOk(await held(state, 'k-never'), 'a key without an approval: not marked')
  await clock.advance(6 * DAY + 1)
  t.notOk(await held(state, 'k-rejected'), 'the mark ends with its approval\'s retention')
  t.ok(await held(state, 'k-pending'), 'the pending one\'s runs on from its expiry')
})

t.test('HeldMarks.writeAll writes many marks a batch at a time, so requests get the store between batches', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pap-marks-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const approvals = await createSqliteApprovalStore(join(dir, 'webhooks.db'))
  t.teardown(() => approvals.close())
  for (let i = 0; i < 1_200; i++) await approvals.create(approvalFixture({ id: `apr_${i}`, key: `k${i}`, expiresAtMs: DAY }))
  const state = createMemoryStore({ clock: new FakeClock() })
  let inFlight = 0
  let most = 0
  const marked = new Set<string>()
  const counting: StateStore = {
    ...state,
    markHeld: async (key, ttlMs) => {
      most = Math.max(most, ++inFlight)
      await new Promise((resolve) => setImmediate(resolve))
      await state.markHeld(key, ttlMs)
      marked.add(key)
      inFlight--
    },
  }
  await new HeldMarks().writeAll(approvals, counting, 0, 7 * DAY)
  t.equal(marked.size, 1_200, 'every one written')
  t.equal(most, 500, 'at most 500 at once')
})
