/**
 * SPEC §11 (round 5, issue 56): a rejection over HTTP is answered only once its amount is back in
 * the day's total. A payout of the same amount sent the moment the 200 arrives would pass the day's
 * total only with the amount given back: it is never refused, 50 times in a row, with the totals in
 * memory and in Redis, notifications on. (Before, the worker gave it back a moment after the answer: refused in 2 of 5.)
 */
import t from 'tap'
import { startRedis } from '../helpers/redis-server.js'
import { decide, startApprovalsRig } from './approvals-harness.js'
import { notifyUrl, rejectionsThenPayouts } from './rejection-runs.js'

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: a payout sent right after a 200 to a rejection over HTTP is judged with the amount back, 50 times in a row`, async (t) => {
    const redis = kind === 'redis' ? await startRedis(t) : null
    const { proxy } = await startApprovalsRig(t, { PROXY_APPROVAL_NOTIFY_URL: await notifyUrl(t), ...(redis === null ? {} : { PROXY_REDIS_URL: redis.url }) })
    await rejectionsThenPayouts(t, proxy, async (id) => {
      const answer = await decide(proxy, id, 'reject', { by: 'Ann', reason: 'not this one' })
      t.equal(answer.status, 200, 'the rejection is answered 200')
      await answer.body?.cancel()
    })
  })
}
