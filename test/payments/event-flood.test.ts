/**
 * SPEC §12 "Look-ups asked by events", from outside: forged final events for some payouts (the
 * provider's static secret, 22 a second) must not starve the scheduled look-ups of the others. An
 * event asks for at most one look-up per payment until its next step, and such look-ups get at
 * most half of PROXY_PAYMENTS_LOOKUPS_PER_SECOND, so every scheduled look-up is made within 10 s of
 * its due time; on one sidecar, and on two replicas sharing Redis. The figures asserted are the
 * sidecar's own (the look-up counts the provider answered, `settledAt` - `createdAt`), not the
 * test's wall clock.
 */
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Env } from '../../src/load-config.js'
import { eventually } from '../helpers/eventually.js'
import { startRedis } from '../helpers/redis-server.js'
import { payout, providerEvent, setting, startSidecar, waitForState, type Sidecar } from './payments-harness.js'

// Kill, restart and flood cycles: a loaded 2-core machine needs more than tap's 60 s for the file.
t.setTimeout(300_000)

const SCHEDULED = 20
const FLOODED = 10
const EVENTS_PER_SECOND = 22
const FLOOD_S = 12
const FIRST_STEP_S = 5

async function flood (t: Test, replicas: number): Promise<void> {
  const redis = replicas > 1 ? await startRedis(t) : null
  const overrides: Env = { PROXY_PAYMENTS_LOOKUP_SCHEDULE: `${FIRST_STEP_S}s,10m`, ...(redis === null ? {} : { PROXY_REDIS_URL: redis.url }) }
  const { provider, env } = await setting(t, overrides)
  const sidecars: Sidecar[] = []
  for (let i = 0; i < replicas; i++) sidecars.push(await startSidecar(t, env))
  const at = (i: number): Sidecar => sidecars[i % sidecars.length] as Sidecar
  const pay = async (reference: string, i: number): Promise<string> => {
    const res = await payout(at(i).url, { amount: 10, currency: 'KES', externalReference: reference })
    t.equal(res.status, 200, reference)
    return ((await res.json()) as { data: { transactionId: string } }).data.transactionId
  }
  const flooded = await Promise.all(Array.from({ length: FLOODED }, async (_, i) => await pay(`flooded-${i}`, i)))
  const scheduled = await Promise.all(Array.from({ length: SCHEDULED }, async (_, i) => await pay(`scheduled-${i}`, i)))
  // The provider settles the scheduled ones now: their first scheduled look-up is what finds it.
  for (const id of scheduled) provider.transactions.setStatus(id, 'successful')

  let sent = 0
  let accepted = 0
  const started = performance.now()
  while (performance.now() - started < FLOOD_S * 1000) {
    const batch = Array.from({ length: EVENTS_PER_SECOND }, (_, k) => sent + k)
    await Promise.all(batch.map(async (n) => {
      // Answered or not (a loaded machine may answer 503, and the provider would retry), each is the flood's.
      const event = await providerEvent(at(n).intakeUrl, { transactionId: flooded[n % FLOODED], externalReference: `flooded-${n % FLOODED}`, status: 'successful' })
      if (event.status === 200) accepted++
    }))
    sent += batch.length
    await sleep(Math.max(0, 1000 * sent / EVENTS_PER_SECOND - (performance.now() - started)))
  }

  const settled = await Promise.all(scheduled.map(async (_, i) => await waitForState(at(i).url, `scheduled-${i}`, 'succeeded', 60_000)))
  const late = settled.map((p) => (p.settledAt ?? 0) - p.createdAt).sort((a, b) => a - b)
  t.ok(accepted > sent / 2, `the flood reached the inbox (${accepted} of ${sent} stored)`)
  t.comment(`${accepted} forged events stored; scheduled look-ups settled ${late[0]}–${late.at(-1)} s after creation (due ${FIRST_STEP_S}–${FIRST_STEP_S * 1.1} s)`)
  // Whole seconds both: one more for the rounding of each.
  t.ok((late.at(-1) as number) <= FIRST_STEP_S * 1.1 + 10 + 2, `every scheduled look-up made within 10 s of its due time (slowest ${late.at(-1)} s after creation)`)
  for (const p of settled) t.match(p, { settledBy: 'lookup', confirmed: true })

  const floodedLookups = flooded.map((id) => provider.transactions.lookups.get(id) ?? 0)
  t.ok(floodedLookups.every((n) => n >= 1 && n <= 2), `each flooded payment looked up once for its events, and at most once more for its step (${floodedLookups.join(', ')}), for ${sent / FLOODED} events each`)
  for (let i = 0; i < FLOODED; i++) {
    await eventually(async () => (await waitForState(at(i).url, `flooded-${i}`, 'pending')).events.length >= 1, { what: 'its events recorded' })
  }
}

t.test('one sidecar: a flood of forged final events never starves the schedule', async (t) => { await flood(t, 1) })
t.test('two replicas sharing Redis: the same, the rate shared', async (t) => { await flood(t, 2) })
