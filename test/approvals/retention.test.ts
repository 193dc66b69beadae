/**
 * Retention of decided approvals (docs/approvals.md): a rejected approval is the reference's §8
 * record for the agent's retry, so it answers 403 for as long as such a record would live
 * (PROXY_IDEMPOTENCY_TTL_SECONDS, when longer than the inbox's 7 days), and is removed after it;
 * the same request is then new, and held again. Time is the proxy's clock seam (a fake clock).
 */
import t from 'tap'
import { APPROVAL_CLEANUP_INTERVAL_MS, APPROVAL_LOOK_INTERVAL_MS, approvalRetentionMs } from '../../src/approvals/approval-worker.js'
import { DEFAULT_IDEMPOTENCY_TTL_S, DEFAULT_WEBHOOK_RETENTION_S } from '../../src/config/schema.js'
import { eventually } from '../helpers/eventually.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { startRedis } from '../helpers/redis-server.js'
import { APPROVER_KEY, decide, look, pay, startApprovalsRig, type HeldAnswer } from './approvals-harness.js'

const held = { amount: '300', currency: 'KES', externalReference: 'kept-1' }
const TEN_DAYS_S = 10 * 86400

t.test('retention is the inbox\'s 7 days, or the idempotency records\' lifetime when longer', async (t) => {
  t.equal(approvalRetentionMs(DEFAULT_IDEMPOTENCY_TTL_S * 1000), DEFAULT_WEBHOOK_RETENTION_S * 1000)
  t.equal(approvalRetentionMs(TEN_DAYS_S * 1000), TEN_DAYS_S * 1000)
})

const cases = [
  { kind: 'embedded', idempotencyTtlS: DEFAULT_IDEMPOTENCY_TTL_S },
  { kind: 'embedded', idempotencyTtlS: TEN_DAYS_S },
  { kind: 'redis', idempotencyTtlS: TEN_DAYS_S },
] as const

for (const { kind, idempotencyTtlS } of cases) {
  t.test(`${kind}, PROXY_IDEMPOTENCY_TTL_SECONDS=${idempotencyTtlS}: a rejected approval answers the retry until its retention ends, then is removed`, async (t) => {
    const clock = new FakeClock(Date.now())
    const redis = kind === 'redis' ? { PROXY_REDIS_URL: (await startRedis(t)).url } : {}
    const { proxy } = await startApprovalsRig(t, { PROXY_IDEMPOTENCY_TTL_SECONDS: String(idempotencyTtlS), ...redis }, { clock })
    const { approval } = await (await pay(proxy, held)).json() as HeldAnswer
    t.equal((await decide(proxy, approval.id, 'reject', { by: 'Ann', reason: 'unknown recipient' })).status, 200)
    await eventually(() => proxy.logs.find('held amount given back to the day total').length === 1, { what: 'the rejection settled' })
    const retentionMs = approvalRetentionMs(idempotencyTtlS * 1000)

    clock.jumpWall(retentionMs - 60_000)
    await clock.advance(APPROVAL_LOOK_INTERVAL_MS)
    await assertProxyError(t, await pay(proxy, held), 403, 'APPROVAL_REJECTED', 'a minute before the retention ends')
    t.equal((await look(proxy, `/approvals/${approval.id}`, APPROVER_KEY)).status, 200, 'still listed')

    // Past the retention, and past the next cleanup.
    clock.jumpWall(APPROVAL_CLEANUP_INTERVAL_MS + 60_000)
    await clock.advance(APPROVAL_LOOK_INTERVAL_MS)
    await eventually(() => proxy.logs.find('approval retention: settled approvals removed').some((r) => r['removed'] === 1 && r['level'] === 30), { what: 'the removal' })
    await assertProxyError(t, await look(proxy, `/approvals/${approval.id}`, APPROVER_KEY), 404, 'APPROVAL_NOT_FOUND')
    const again = await pay(proxy, held)
    t.equal(again.status, 202, 'the same request is new again, and held')
    t.not(((await again.json()) as HeldAnswer).approval.id, approval.id)
  })
}
