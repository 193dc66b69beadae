/**
 * SPEC §11's safety rows over real sockets, with the embedded store and with Redis: a record approved
 * by hand in the store (no valid seal) is never sent; silence is never consent (an expired approval
 * is never sent, its amount comes back); a provider 4xx gives the day's total back and is the agent's
 * recorded answer. Time passes through the proxy's one clock seam (a held record's expiry is sealed:
 * moving it in the store is a tampering, tested in sealed-records.test.ts).
 */
import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import { Redis } from 'ioredis'
import { APPROVAL_LOOK_INTERVAL_MS } from '../../src/approvals/approval-worker.js'
import { DEFAULT_APPROVAL_TTL_S } from '../../src/config/schema.js'
import { eventually } from '../helpers/eventually.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { startRedis } from '../helpers/redis-server.js'
import { afterPasses, passesIn } from '../helpers/worker-passes.js'
import { decide, look, pay, payouts, startApprovalsRig, type ApprovalsRig, type HeldAnswer } from './approvals-harness.js'

const held = { amount: '300', currency: 'KES', externalReference: 'inv-9', recipient: '+254700000009' }
const TTL_MS = DEFAULT_APPROVAL_TTL_S * 1000

/** What someone with write access to the store could do (approve by hand), written into the embedded file or Redis directly. */
interface Kind {
  name: string
  start: (t: Test, clock?: FakeClock) => Promise<ApprovalsRig & { approveByHand: (id: string) => Promise<void> }>
}

const sqlite = (storePath: string, sql: string, id: string): void => {
  const db = new Database(storePath)
  try {
    db.prepare(sql).run(id)
  } finally {
    db.close()
  }
}

const kinds: Kind[] = [{
  name: 'embedded',
  async start (t, clock) {
    const rig = await startApprovalsRig(t, {}, clock === undefined ? {} : { clock })
    return {
      ...rig,
      approveByHand: async (id) => { sqlite(rig.storePath, `UPDATE approvals SET status = 'approved', record = json_set(record, '$.decidedBy', 'mallory', '$.decisionSeal', 'forged') WHERE id = ?`, id) },
    }
  },
}, {
  name: 'redis',
  async start (t, clock) {
    const redis = await startRedis(t)
    const rig = await startApprovalsRig(t, { PROXY_REDIS_URL: redis.url }, clock === undefined ? {} : { clock })
    const client = new Redis(redis.url)
    t.teardown(() => { client.disconnect() })
    const edit = async (id: string, change: (record: Record<string, unknown>) => void, fields: Record<string, string | number>): Promise<void> => {
      const record = JSON.parse(await client.hget(`pap:apr:${id}`, 'record') ?? '{}') as Record<string, unknown>
      change(record)
      await client.hset(`pap:apr:${id}`, { ...fields, record: JSON.stringify(record) })
    }
    return {
      ...rig,
      // Where the store's own writes would put an approved record, so the loop reads it: someone who
      // wants it sent writes that too.
      approveByHand: async (id) => {
        await edit(id, (r) => { r['decidedBy'] = 'mallory'; r['decisionSeal'] = 'forged' }, { status: 'approved' })
        await client.multi().zrem('pap:apr:pending', id).zrem('pap:apr:expiring', id).zadd('pap:apr:unsettled', 0, id).exec()
      },
    }
  },
}]

for (const kind of kinds) {
  t.test(`${kind.name}: an approved record written into the store by hand is never forwarded, and is logged at error`, async (t) => {
    const { provider, proxy, approveByHand } = await kind.start(t)
    const { approval } = await (await pay(proxy, held)).json() as HeldAnswer
    await approveByHand(approval.id)
    const failed = (): Array<Record<string, unknown>> => proxy.logs.find('approval record failed verification: never sent, treated as rejected (was the store written by hand, or sealed with another PROXY_APPROVAL_SEALING_SECRET?)')
    await eventually(() => failed().some((r) => r['level'] === 50 && r['approval'] === approval.id && r['failed'] === 'decision seal'), { what: 'the error log', timeoutMs: 5000 })
    // Both loops read the record every second: once each has looked twice more, it had its chance to send it, or to log it again.
    await afterPasses([passesIn(proxy.metrics.registry, 'approvals'), passesIn(proxy.metrics.registry, 'approvals_forward')], { what: 'both approvals loops', between: async () => { proxy.shared.approvals?.nudge() } })
    t.same(payouts(provider), [], 'never sent')
    t.equal(failed().length, 1, 'logged once, not once a second')
    t.match(await (await look(proxy, `/approvals/${approval.id}`)).json(), { approval: { status: 'rejected', reason: 'record failed verification' } }, 'shown as rejected')
    t.notOk('decidedBy' in ((await (await look(proxy, `/approvals/${approval.id}`)).json()) as HeldAnswer).approval, 'and as nobody\'s decision')
    await assertProxyError(t, await pay(proxy, held), 403, 'APPROVAL_REJECTED', 'the agent\'s retry')
  })

  t.test(`${kind.name}: an expired approval is never sent: the agent gets 403 APPROVAL_EXPIRED, a decision 409, the amount comes back`, async (t) => {
    const clock = new FakeClock(Date.now())
    const { provider, proxy } = await kind.start(t, clock)
    const { approval } = await (await pay(proxy, held)).json() as HeldAnswer
    clock.jumpWall(TTL_MS + 1000)
    await assertProxyError(t, await pay(proxy, held), 403, 'APPROVAL_EXPIRED', "the agent's retry")
    await assertProxyError(t, await decide(proxy, approval.id, 'approve'), 409, 'APPROVAL_ALREADY_DECIDED', 'approving it late')
    await clock.advance(APPROVAL_LOOK_INTERVAL_MS)
    await eventually(() => proxy.logs.find('approval expired: the request is not sent').length === 1, { what: 'the expiry', timeoutMs: 5000 })
    t.match(await (await look(proxy, `/approvals/${approval.id}`)).json(), { approval: { status: 'expired' } })
    await eventually(async () => {
      await clock.advance(APPROVAL_LOOK_INTERVAL_MS)
      return (await pay(proxy, { ...held, externalReference: 'inv-10' })).status === 202
    }, { what: 'the amount given back', timeoutMs: 5000 })
    t.same(payouts(provider), [])
  })

  t.test(`${kind.name}: an approved request answered 4xx gives the day total back, and the 4xx is the agent's answer`, async (t) => {
    const { provider, proxy } = await kind.start(t)
    provider.setUpstreamHandler((req, res) => {
      if (req.url?.includes('/payouts') !== true) return false
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"success":false,"message":"invalid recipient"}')
      return true
    })
    const { approval } = await (await pay(proxy, held)).json() as HeldAnswer
    t.equal((await decide(proxy, approval.id, 'approve')).status, 200)
    await eventually(() => payouts(provider).length === 1, { what: 'the forward', timeoutMs: 5000 })
    await eventually(async () => (await pay(proxy, held)).headers.get('idempotent-replayed') === 'true', { what: 'the recorded 400', timeoutMs: 5000 })
    const replay = await pay(proxy, held)
    t.equal(replay.status, 400)
    t.same(await replay.json(), { success: false, message: 'invalid recipient' })
    t.equal((await pay(proxy, { ...held, externalReference: 'inv-11' })).status, 202, 'the 300 came back to the day: another 300 is held, not refused')
  })
}
