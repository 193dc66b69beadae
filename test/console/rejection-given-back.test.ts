/**
 * SPEC §11 and §14 (round 5, issue 56): a rejection on the console (its form POST) is answered only
 * once its amount is back in the day's total, so a payout of the same amount sent the moment the
 * answer arrives is never refused, 50 times in a row, with the totals in memory and in Redis,
 * notifications on.
 */
import t from 'tap'
import { notifyUrl, rejectionsThenPayouts, RUNS } from '../approvals/rejection-runs.js'
import { startRedis } from '../helpers/redis-server.js'
import { APPROVER, ConsoleClient, csrfOf, startConsoleRig } from './console-rig.js'

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: a payout sent right after the console answers a rejection is judged with the amount back, ${RUNS} times in a row`, async (t) => {
    const redis = kind === 'redis' ? await startRedis(t) : null
    const rig = await startConsoleRig(t, { env: { PROXY_APPROVAL_NOTIFY_URL: await notifyUrl(t), ...(redis === null ? {} : { PROXY_REDIS_URL: redis.url }) } })
    const client = new ConsoleClient(rig.url)
    await client.signIn(rig.signins, APPROVER)
    const csrf = csrfOf((await client.get('/approvals')).text)
    await rejectionsThenPayouts(t, rig.proxy, async (id) => {
      const answer = await client.post(`/approvals/${id}/decide`, { _csrf: csrf, decision: 'reject', reason: 'not this one' })
      t.equal(answer.status, 303, 'the rejection is answered, to the approval\'s page')
    })
  })
}
