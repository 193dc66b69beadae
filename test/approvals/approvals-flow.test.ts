/**
 * SPEC §11 over real sockets, with the embedded store and with Redis (approvals, records and day
 * totals all there, as replicas share them): a request above approveAbove is held (202)
 * and never reaches the provider before a person approves it; the agent's retry learns the outcome.
 */
import t from 'tap'
import { eventually } from '../helpers/eventually.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { DEMO_CREDENTIALS } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { AGENT_KEY, APPROVER_KEY, SIGNING_SECRET, decide, look, pay, payouts, startApprovalsRig as startEmbedded, type ApprovalsRig, type HeldAnswer } from './approvals-harness.js'

const held = { amount: '300', currency: 'KES', externalReference: 'inv-1', recipient: '+254700000001' }

const kinds = ['embedded', 'redis'] as const
for (const kind of kinds) {
  /** The same rig, its approvals (and §8 records and day totals) in Redis for the second kind. */
  const startApprovalsRig = async (t: Parameters<typeof startEmbedded>[0]): Promise<ApprovalsRig> => kind === 'embedded'
    ? await startEmbedded(t)
    : await startEmbedded(t, { PROXY_REDIS_URL: (await startRedis(t)).url })

  t.test(`${kind}: a held payout is sent once after approval, and the agent's retry gets the provider's answer`, async (t) => {
    const { provider, proxy } = await startApprovalsRig(t)
    const first = await pay(proxy, held)
    t.equal(first.status, 202)
    const { approval } = await first.json() as HeldAnswer
    t.match(approval.id, /^apr_[A-Za-z0-9_-]+$/)
    t.equal(first.headers.get('location'), `/approvals/${approval.id}`)
    t.same(Object.keys(approval).sort(), ['amount', 'caller', 'currency', 'environment', 'expiresAt', 'externalReference', 'id', 'interface', 'method', 'path', 'request', 'status'].sort())
    t.match(approval, { status: 'pending', caller: 'payout-agent', environment: 'sandbox', interface: 'fiat', method: 'POST', path: '/payouts', amount: '300', currency: 'KES', externalReference: 'inv-1', request: JSON.stringify(held) })
    t.ok(approval.expiresAt > Date.now() / 1000 + 86_000, 'expires in a day')

    const again = await pay(proxy, { externalReference: 'inv-1', currency: 'KES', amount: '300', recipient: '+254700000001' })
    t.equal(again.status, 202, 'the same request (members in another order) is held, not held twice')
    t.equal(((await again.json()) as HeldAnswer).approval.id, approval.id)
    await assertProxyError(t, await pay(proxy, { ...held, amount: '350' }), 422, 'IDEMPOTENCY_KEY_REUSED', 'the same reference with a larger amount')
    const seen = await look(proxy, `/approvals/${approval.id}`)
    t.equal(seen.status, 200)
    t.equal(((await seen.json()) as HeldAnswer).approval.amount, '300', 'the approval unchanged')
    await assertProxyError(t, await decide(proxy, approval.id, 'approve', { by: 'agent' }, AGENT_KEY), 403, 'APPROVAL_NOT_PERMITTED', 'the agent approving its own request')
    t.same(payouts(provider), [], 'nothing reached the provider while pending')

    const approved = await decide(proxy, approval.id, 'approve', { by: 'Ann Treasurer', reason: 'invoice 1 checked' })
    t.equal(approved.status, 200)
    t.match(await approved.json(), { approval: { id: approval.id, status: 'approved', decidedBy: 'Ann Treasurer', decidedByCaller: 'treasurer', reason: 'invoice 1 checked' } })
    await assertProxyError(t, await decide(proxy, approval.id, 'reject', { by: 'Bob' }), 409, 'APPROVAL_ALREADY_DECIDED', 'a second decision')

    await eventually(() => payouts(provider).length === 1, { what: 'the approved payout forwarded', timeoutMs: 5000 })
    t.equal(payouts(provider)[0]?.body, JSON.stringify(held), 'forwarded byte for byte as the person saw it')
    let answered: Response | null = null
    await eventually(async () => {
      const retry = await pay(proxy, held)
      if (retry.headers.get('idempotent-replayed') !== 'true') return false
      answered = retry
      return true
    }, { what: 'the recorded answer', timeoutMs: 5000 })
    const replay = answered as Response | null
    t.equal(replay?.status, 200)
    t.match(await replay?.json(), { success: true, path: '/payouts' })
    t.equal(payouts(provider).length, 1, 'sent once')

    const logs = proxy.logs.lines.join('\n')
    for (const secret of [SIGNING_SECRET, AGENT_KEY, APPROVER_KEY, DEMO_CREDENTIALS.sandbox.apiKey, DEMO_CREDENTIALS.sandbox.publicKey, ...provider.issuedTokens]) t.notOk(logs.includes(secret), 'no secret in the logs')
    t.notOk(logs.includes('+254700000001'), 'no body in the logs')
    for (const msg of ['request held for approval', 'approval approved', 'approved request forwarded', 'approved request answered']) {
      t.ok(proxy.logs.find(msg).some((r) => r['level'] === 30 && r['approval'] === approval.id && r['caller'] === 'payout-agent'), `info: ${msg}`)
    }
    const metrics = await (await fetch(`${proxy.url}/metrics`)).text()
    t.match(metrics, /approvals_total\{caller="payout-agent",outcome="held"\} 1/)
    t.match(metrics, /approvals_total\{caller="payout-agent",outcome="approved"\} 1/)
    t.match(metrics, /approvals_total\{caller="payout-agent",outcome="answered"\} 1/)
    await eventually(async () => /approvals_pending 0/.test(await (await fetch(`${proxy.url}/metrics`)).text()), { what: 'the pending gauge back at 0' })
  })

  t.test(`${kind}: a rejected payout is a 403 to the agent, and its amount goes back to the day total`, async (t) => {
    const { provider, proxy } = await startApprovalsRig(t)
    const { approval } = await (await pay(proxy, held)).json() as HeldAnswer
    await eventually(async () => /approvals_pending 1/.test(await (await fetch(`${proxy.url}/metrics`)).text()), { what: 'the pending gauge' })
    await assertProxyError(t, await pay(proxy, { ...held, externalReference: 'inv-2' }), 403, 'AMOUNT_LIMIT_EXCEEDED', 'pending approvals that together pass perDay')
    const rejected = await decide(proxy, approval.id, 'reject', { by: 'Ann', reason: 'unknown recipient' })
    t.match(await rejected.json(), { approval: { status: 'rejected', decidedBy: 'Ann', reason: 'unknown recipient' } })
    const refused = await assertProxyError(t, await pay(proxy, held), 403, 'APPROVAL_REJECTED', "the agent's retry")
    t.match(refused?.error.message, /unknown recipient/)
    await eventually(async () => (await pay(proxy, { ...held, externalReference: 'inv-3' })).status === 202, { what: 'the amount given back', timeoutMs: 5000 })
    t.same(payouts(provider), [], 'never sent')
  })

  t.test(`${kind}: who may decide and see: an approver not its own requests, an agent only its own approvals`, async (t) => {
    const { proxy } = await startApprovalsRig(t)
    const treasurers = await pay(proxy, { ...held, externalReference: 'treasurer-1' }, APPROVER_KEY)
    const mine = await treasurers.json() as HeldAnswer & { error?: unknown }
    t.equal(treasurers.status, 202, JSON.stringify(mine.error ?? null))
    await assertProxyError(t, await decide(proxy, mine.approval.id, 'approve'), 403, 'APPROVAL_SELF_DECISION')
    await assertProxyError(t, await look(proxy, `/approvals/${mine.approval.id}`), 404, 'APPROVAL_NOT_FOUND', "another caller's approval")
    await assertProxyError(t, await look(proxy, '/approvals/apr_doesnotexist'), 404, 'APPROVAL_NOT_FOUND')
    await assertProxyError(t, await look(proxy, '/approvals?status=pending'), 403, 'APPROVAL_NOT_PERMITTED', 'an agent listing')
    await assertProxyError(t, await look(proxy, '/approvals', 'pak_nobody'), 401, 'CALLER_UNAUTHENTICATED')
    const agents = await (await pay(proxy, held)).json() as HeldAnswer
    const list = await look(proxy, '/approvals?status=pending', APPROVER_KEY)
    t.same(((await list.json()) as { approvals: Array<{ id: string }> }).approvals.map((a) => a.id).sort(), [mine.approval.id, agents.approval.id].sort())
    await assertProxyError(t, await decide(proxy, agents.approval.id, 'approve', { reason: 'no name' }), 400, 'BAD_REQUEST', 'a decision without by')
  })

  t.test(`${kind}: two decisions at once: one wins, the other 409`, async (t) => {
    const { proxy } = await startApprovalsRig(t)
    const { approval } = await (await pay(proxy, held)).json() as HeldAnswer
    const answers = await Promise.all([decide(proxy, approval.id, 'approve', { by: 'Ann' }), decide(proxy, approval.id, 'reject', { by: 'Bob' })])
    t.same(answers.map((a) => a.status).sort(), [200, 409])
  })

  t.test(`${kind}: a held request needs a reference; amounts up to approveAbove go alone`, async (t) => {
    const { provider, proxy } = await startApprovalsRig(t)
    await assertProxyError(t, await pay(proxy, { amount: '300', currency: 'KES' }), 400, 'EXTERNAL_REFERENCE_REQUIRED')
    const alone = await pay(proxy, { amount: '100', currency: 'KES', externalReference: 'small-1' })
    t.equal(alone.status, 200)
    t.equal(payouts(provider).length, 1)
  })
}
