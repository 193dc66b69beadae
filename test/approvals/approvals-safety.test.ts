/**
 * SPEC §11's safety rows over real sockets, with the embedded store and with Redis: a record approved
 * by hand in the store (no valid MAC) is never sent; silence is never consent (an expired approval is
 * never sent, its amount comes back); a provider 4xx gives the day's total back and is the agent's
 * recorded answer.
 */
import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import { Redis } from 'ioredis'
import { eventually } from '../helpers/eventually.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { startRedis } from '../helpers/redis-server.js'
import { decide, look, pay, payouts, startApprovalsRig, type ApprovalsRig, type HeldAnswer } from './approvals-harness.js'

const held = { amount: '300', currency: 'KES', externalReference: 'inv-9', recipient: '+254700000009' }

/**
 * What someone with write access to the store could do (approve by hand), and what the passing of
 * time does (expire), written into the embedded file or Redis directly.
 */
interface Kind {
  name: string
  start: (t: Test) => Promise<ApprovalsRig & { approveByHand: (id: string) => Promise<void>, expireNow: (id: string) => Promise<void> }>
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
  async start (t) {
    const rig = await startApprovalsRig(t)
    return {
      ...rig,
      approveByHand: async (id) => { sqlite(rig.storePath, `UPDATE approvals SET status = 'approved', record = json_set(record, '$.decidedBy', 'mallory', '$.mac', 'forged') WHERE id = ?`, id) },
      expireNow: async (id) => { sqlite(rig.storePath, "UPDATE approvals SET expires_at = 0, record = json_set(record, '$.expiresAtMs', 0) WHERE id = ?", id) },
    }
  },
}, {
  name: 'redis',
  async start (t) {
    const redis = await startRedis(t)
    const rig = await startApprovalsRig(t, { PROXY_REDIS_URL: redis.url })
    const client = new Redis(redis.url)
    t.teardown(() => { client.disconnect() })
    const edit = async (id: string, change: (record: Record<string, unknown>) => void, fields: Record<string, string | number>): Promise<void> => {
      const record = JSON.parse(await client.hget(`pap:apr:${id}`, 'record') ?? '{}') as Record<string, unknown>
      change(record)
      await client.hset(`pap:apr:${id}`, { ...fields, record: JSON.stringify(record) })
    }
    return {
      ...rig,
      approveByHand: async (id) => { await edit(id, (r) => { r['decidedBy'] = 'mallory'; r['mac'] = 'forged' }, { status: 'approved' }) },
      expireNow: async (id) => { await edit(id, (r) => { r['expiresAtMs'] = 0 }, { expiresAt: 0 }) },
    }
  },
}]

for (const kind of kinds) {
  t.test(`${kind.name}: an approved record written into the store by hand is never forwarded, and is logged at error`, async (t) => {
    const { provider, proxy, approveByHand } = await kind.start(t)
    const { approval } = await (await pay(proxy, held)).json() as HeldAnswer
    await approveByHand(approval.id)
    await eventually(() => proxy.logs.find('approved record has no valid MAC: not forwarded (was the store written by hand?)').some((r) => r['level'] === 50 && r['approval'] === approval.id), { what: 'the error log', timeoutMs: 5000 })
    await new Promise((resolve) => setTimeout(resolve, 1500))
    t.same(payouts(provider), [], 'never sent')
    t.equal(proxy.logs.find('approved record has no valid MAC: not forwarded (was the store written by hand?)').length, 1, 'logged once, not once a second')
  })

  t.test(`${kind.name}: an expired approval is never sent: the agent gets 403 APPROVAL_EXPIRED, a decision 409, the amount comes back`, async (t) => {
    const { provider, proxy, expireNow } = await kind.start(t)
    const { approval } = await (await pay(proxy, held)).json() as HeldAnswer
    await expireNow(approval.id)
    await assertProxyError(t, await pay(proxy, held), 403, 'APPROVAL_EXPIRED', "the agent's retry")
    await assertProxyError(t, await decide(proxy, approval.id, 'approve'), 409, 'APPROVAL_ALREADY_DECIDED', 'approving it late')
    await eventually(() => proxy.logs.find('approval expired: the request is not sent').length === 1, { what: 'the expiry', timeoutMs: 5000 })
    t.match(await (await look(proxy, `/approvals/${approval.id}`)).json(), { approval: { status: 'expired' } })
    await eventually(async () => (await pay(proxy, { ...held, externalReference: 'inv-10' })).status === 202, { what: 'the amount given back', timeoutMs: 5000 })
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
