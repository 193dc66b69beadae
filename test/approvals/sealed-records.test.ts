/**
 * SPEC §11 "Sealed records": write access to the store is not the power to pay. Each test edits the
 * real SQLite file or the real Redis keys the way someone with the store (and not the sealing
 * secret) could, between the hold and the decision, between the decision and the forward, and after
 * the answer, and finds: nothing sent, to the provider or anywhere else (least of all the bearer
 * token), the record shown as rejected with `record failed verification`, the agent's retry 403, an
 * `error` line once, and the count. Time passes through the one clock seam, so the loop looks only
 * when the test says.
 */
import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import { Redis } from 'ioredis'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { APPROVAL_LOOK_INTERVAL_MS } from '../../src/approvals/approval-worker.js'
import { deriveSealKey } from '../../src/approvals/approval-seal.js'
import { decideApproval } from '../../src/approvals/decide-approval.js'
import { openApprovalStore } from '../../src/approvals/open-approval-store.js'
import { createStorage } from '../../src/storage/storage.js'
import { createRecordVerifier } from '../../src/approvals/record-verifier.js'
import { eventually } from '../helpers/eventually.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { startRedis } from '../helpers/redis-server.js'
import { afterPasses, passesIn } from '../helpers/worker-passes.js'
import { SEALING_SECRET, decide, look, pay, payouts, startApprovalsRig, type ApprovalsRig, type HeldAnswer } from './approvals-harness.js'

const held = { amount: '300', currency: 'KES', externalReference: 'sealed-1', recipient: '+254700000001' }
const FAILED = 'approval record failed verification: never sent, treated as rejected (was the store written by hand, or sealed with another PROXY_APPROVAL_SEALING_SECRET?)'

/** A host someone would like the payout (and its bearer token) sent to. */
async function startElsewhere (t: Test): Promise<{ url: string, seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = []
  const server = createServer((req, res) => { seen.push(req.headers); res.end('{}') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/sandbox/b2b`, seen }
}

/** An edit of the stored record: JSON fields, and the store's own fields beside it (status, forward). */
interface Edit { record?: Record<string, unknown>, fields?: { status?: string, forward?: string, forwardSeal?: string | null } }
type Store = 'embedded' | 'redis'

interface Rig extends ApprovalsRig {
  clock: FakeClock
  edit: (id: string, edit: Edit) => Promise<void>
  /** A decision taken in another process, as the CLI takes it: the sidecar's loop learns of it at its next look. */
  decideElsewhere: (id: string) => Promise<void>
}

async function start (t: Test, store: Store): Promise<Rig> {
  const clock = new FakeClock(Date.now())
  const redisUrl = store === 'redis' ? (await startRedis(t)).url : null
  const rig = await startApprovalsRig(t, redisUrl === null ? {} : { PROXY_REDIS_URL: redisUrl }, { clock })
  const config = { approvals: { ...rig.proxy.config.approvals }, state: rig.proxy.config.state }
  const decideElsewhere = async (id: string): Promise<void> => {
    const storage = createStorage(config.state, 'approvals')
    const other = await openApprovalStore(config, storage, pino({ level: 'silent' }))
    try {
      await decideApproval(other, createRecordVerifier(deriveSealKey(SEALING_SECRET), pino({ level: 'silent' }), null), id, { status: 'approved', by: 'Ann', byCaller: 'cli', reason: null }, clock.wallMs())
    } finally {
      await other.close()
      await storage.close()
    }
  }
  if (redisUrl === null) {
    const edit = async (id: string, { record = {}, fields = {} }: Edit): Promise<void> => {
      const db = new Database(rig.storePath)
      try {
        const row = db.prepare('SELECT record FROM approvals WHERE id = ?').get(id) as { record: string }
        const next = { ...JSON.parse(row.record) as Record<string, unknown>, ...record, ...('forwardSeal' in fields ? { forwardSeal: fields.forwardSeal } : {}) }
        db.prepare('UPDATE approvals SET record = ?, status = coalesce(?, status), forward = coalesce(?, forward) WHERE id = ?').run(JSON.stringify(next), fields.status ?? null, fields.forward ?? null, id)
      } finally {
        db.close()
      }
    }
    return { ...rig, clock, edit, decideElsewhere }
  }
  const client = new Redis(redisUrl)
  t.teardown(() => { client.disconnect() })
  const edit = async (id: string, { record = {}, fields = {} }: Edit): Promise<void> => {
    const key = `pap:apr:${id}`
    const stored = JSON.parse(await client.hget(key, 'record') ?? '{}') as Record<string, unknown>
    const { forwardSeal, ...rest } = fields
    await client.hset(key, { record: JSON.stringify({ ...stored, ...record }), ...rest })
    if (forwardSeal === null) await client.hdel(key, 'forwardSeal')
    else if (forwardSeal !== undefined) await client.hset(key, 'forwardSeal', forwardSeal)
    // As the store's own writes would: a stage moved back puts the record where the loop reads.
    if (rest.forward !== undefined && rest.forward !== 'answered') await client.zadd('pap:apr:unsettled', 0, id)
  }
  return { ...rig, clock, edit, decideElsewhere }
}

/** The changes an outside attack made, each a record edit (upstream URL, query, headers, shown amount, body, environment, expiry). */
function holdEdits (elsewhere: string): Array<[string, Edit]> {
  return [
    ['the upstream URL moved to another host', { record: { upstreamUrl: elsewhere } }],
    ['a query added', { record: { query: 'amount=99999' } }],
    ['a header added', { record: { headers: { 'content-type': 'application/json', 'x-extra': '1' } } }],
    ['the shown amount changed', { record: { amount: '5' } }],
    ['the environment changed', { record: { environment: 'production' } }],
    ['the expiry moved', { record: { expiresAtMs: Date.now() + 10 * 86400_000 } }],
    ['the reservations changed', { record: { reservations: [] } }],
  ]
}

async function assertRefused (t: Test, rig: Rig, id: string, elsewhere: { seen: IncomingHttpHeaders[] }, what: string): Promise<void> {
  const { proxy, provider, clock } = rig
  await clock.advance(2 * APPROVAL_LOOK_INTERVAL_MS)
  await eventually(() => proxy.logs.find(FAILED).some((r) => r['approval'] === id && r['level'] === 50), { what: `${what}: the error line`, timeoutMs: 5000 })
  await clock.advance(3 * APPROVAL_LOOK_INTERVAL_MS)
  t.same(payouts(provider), [], `${what}: nothing sent to the provider`)
  t.same(elsewhere.seen, [], `${what}: nothing sent anywhere else, no bearer token`)
  t.equal(proxy.logs.find(FAILED).filter((r) => r['approval'] === id).length, 1, `${what}: logged once`)
  t.match(await (await look(proxy, `/approvals/${id}`)).json(), { approval: { id, status: 'rejected', reason: 'record failed verification' } }, `${what}: shown as rejected`)
  await assertProxyError(t, await pay(proxy, held), 403, 'APPROVAL_REJECTED', `${what}: the agent's retry`)
  const metrics = await (await fetch(`${proxy.url}/metrics`)).text()
  t.match(metrics, /approvals_total\{caller="payout-agent",outcome="failed_verification"\} 1/, `${what}: counted`)
}

for (const store of ['embedded', 'redis'] as const) {
  t.test(`${store}: a record changed in the store between the hold and the decision is never sent nor decidable`, async (t) => {
    const elsewhere = await startElsewhere(t)
    for (const [what, edit] of holdEdits(elsewhere.url)) {
      await t.test(what, async (t) => {
        const rig = await start(t, store)
        const { approval } = await (await pay(rig.proxy, held)).json() as HeldAnswer
        await rig.edit(approval.id, edit)
        await assertProxyError(t, await decide(rig.proxy, approval.id, 'approve'), 409, 'APPROVAL_ALREADY_DECIDED', `${what}: the approver's decision`)
        await assertRefused(t, rig, approval.id, elsewhere, what)
      })
    }
  })

  t.test(`${store}: a record changed in the store between the decision and the forward is never sent`, async (t) => {
    const elsewhere = await startElsewhere(t)
    const edits: Array<[string, Edit]> = [
      ...holdEdits(elsewhere.url).slice(0, 5),
      ['who decided changed', { record: { decidedBy: 'mallory' } }],
      ['the forwarding stage moved on', { fields: { forward: 'sending', forwardSeal: 'forged' } }],
    ]
    for (const [what, edit] of edits) {
      await t.test(what, async (t) => {
        const rig = await start(t, store)
        const { approval } = await (await pay(rig.proxy, held)).json() as HeldAnswer
        await rig.decideElsewhere(approval.id)
        await rig.edit(approval.id, edit)
        await assertRefused(t, rig, approval.id, elsewhere, what)
      })
    }
  })

  t.test(`${store}: an answered payout is not sent again when its stage is moved back in the store`, async (t) => {
    const rig = await start(t, store)
    const { proxy, provider, clock } = rig
    const { approval } = await (await pay(proxy, held)).json() as HeldAnswer
    await rig.decideElsewhere(approval.id)
    await clock.advance(APPROVAL_LOOK_INTERVAL_MS)
    await eventually(async () => {
      await clock.advance(APPROVAL_LOOK_INTERVAL_MS)
      return (await pay(proxy, held)).headers.get('idempotent-replayed') === 'true'
    }, { what: 'the answered payout', timeoutMs: 5000 })
    t.equal(payouts(provider).length, 1)
    // A stage it never had a seal for, then the stage it had before its forward (a restore).
    await rig.edit(approval.id, { fields: { forward: 'sending', forwardSeal: 'forged' } })
    await clock.advance(3 * APPROVAL_LOOK_INTERVAL_MS)
    await eventually(() => proxy.logs.find(FAILED).some((r) => r['approval'] === approval.id), { what: 'the error line', timeoutMs: 5000 })
    await rig.edit(approval.id, { fields: { forward: 'none', forwardSeal: null } })
    // The forward loop looks at every second of the clock, and a look sends what it finds: two more looks had their chance to send it again.
    await afterPasses(passesIn(proxy.metrics.registry, 'approvals_forward'), { what: 'the forward loop', between: async () => { await clock.advance(APPROVAL_LOOK_INTERVAL_MS) } })
    t.equal(payouts(provider).length, 1, 'sent once: the reference\'s recorded answer stops a restored record')
    t.equal((await pay(proxy, held)).headers.get('idempotent-replayed'), 'true', 'the agent still gets the recorded answer')
  })
}
