/**
 * SPEC §12 "Asking", end to end with the real process and a callers file: a caller sees its own
 * payments, an approver sees all, and another caller's reference or id is 404 PAYMENT_NOT_FOUND
 * answered exactly as one that does not exist (BAD_INPUTS "Payments": nothing to learn from it).
 */
import t from 'tap'
import { assertProxyError } from '../helpers/proxy-error.js'
import { AGENT_A_KEY, AGENT_B_KEY, APPROVER_KEY, callersFile, payout, paymentOf, setting, startSidecar } from './payments-harness.js'

const as = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` })

t.test('a caller sees its own payments, an approver all; another caller\'s is 404 as if it did not exist', async (t) => {
  const { dir, env } = await setting(t)
  const sidecar = await startSidecar(t, { ...env, PROXY_CALLERS_FILE: callersFile(dir) })
  const pay = async (reference: string, key: string): Promise<string> => {
    const res = await payout(sidecar.url, { amount: 1, currency: 'KES', externalReference: reference }, key)
    if (res.status !== 200) throw new Error(`${reference}: ${res.status}`)
    return res.headers.get('payment-id') ?? ''
  }
  const aOnly = await pay('a-only', AGENT_A_KEY)
  const aShared = await pay('inv 9/1', AGENT_A_KEY)
  const bShared = await pay('inv 9/1', AGENT_B_KEY)
  const bOnly = await pay('b-only', AGENT_B_KEY)

  t.equal((await paymentOf(sidecar.url, 'a-only', AGENT_A_KEY))?.id, aOnly)
  t.equal((await paymentOf(sidecar.url, 'inv 9/1', AGENT_A_KEY))?.id, aShared, 'the same reference: each caller its own')
  t.equal((await paymentOf(sidecar.url, 'inv 9/1', AGENT_B_KEY))?.id, bShared)
  t.equal((await paymentOf(sidecar.url, 'a-only', APPROVER_KEY))?.id, aOnly, 'an approver sees every caller\'s')
  t.equal((await paymentOf(sidecar.url, 'inv 9/1', APPROVER_KEY))?.id, bShared, 'the most recent of them')
  t.equal((await paymentOf(sidecar.url, aOnly, APPROVER_KEY))?.id, aOnly, 'by id too')

  const theirs = await fetch(`${sidecar.url}/payments/a-only`, { headers: as(AGENT_B_KEY) })
  const none = await fetch(`${sidecar.url}/payments/no-such-reference`, { headers: as(AGENT_B_KEY) })
  const theirsById = await fetch(`${sidecar.url}/payments/${aOnly}`, { headers: as(AGENT_B_KEY) })
  const [theirsBody, noneBody, byIdBody] = [await theirs.text(), await none.text(), await theirsById.text()]
  for (const [res, body] of [[theirs, theirsBody], [none, noneBody], [theirsById, byIdBody]] as const) {
    await assertProxyError(t, { status: res.status, headers: res.headers, body }, 404, 'PAYMENT_NOT_FOUND')
  }
  t.equal(theirsBody, noneBody, 'another caller\'s payment and none at all: the same body')
  t.equal(byIdBody, noneBody)
  const headerNames = (res: Response): string[] => [...res.headers.keys()].filter((h) => h !== 'date').sort()
  t.same(headerNames(theirs), headerNames(none), 'and the same headers')

  const list = async (key: string, query = ''): Promise<string[]> => ((await (await fetch(`${sidecar.url}/payments${query}`, { headers: as(key) })).json()) as { payments: Array<{ id: string }> }).payments.map((p) => p.id)
  t.same(await list(AGENT_A_KEY), [aShared, aOnly], 'newest first, its own only')
  t.same(await list(AGENT_B_KEY), [bOnly, bShared])
  t.same(await list(APPROVER_KEY), [bOnly, bShared, aShared, aOnly])
  t.same(await list(APPROVER_KEY, '?state=pending&limit=2'), [bOnly, bShared])
  t.same(await list(AGENT_A_KEY, '?state=succeeded'), [])

  await assertProxyError(t, await fetch(`${sidecar.url}/payments/a-only`), 401, 'CALLER_UNAUTHENTICATED')
  await assertProxyError(t, await fetch(`${sidecar.url}/payments`, { headers: as('pak_not-a-caller-key-000000000000000000000000') }), 401, 'CALLER_UNAUTHENTICATED')
  await assertProxyError(t, await fetch(`${sidecar.url}/payments/a-only`, { headers: { ...as(AGENT_A_KEY), origin: 'https://evil.example' } }), 403, 'CLIENT_NOT_ALLOWED')
  await assertProxyError(t, await fetch(`${sidecar.url}/payments/a-only?environment=production`, { headers: as(AGENT_A_KEY) }), 404, 'PAYMENT_NOT_FOUND')
  t.equal((await paymentOf(sidecar.url, 'a-only?environment=sandbox', AGENT_A_KEY)), null, 'an encoded ? is part of the reference')
  t.equal((await fetch(`${sidecar.url}/payments/a-only?environment=sandbox`, { headers: as(AGENT_A_KEY) })).status, 200)
  await assertProxyError(t, await fetch(`${sidecar.url}/payments/a-only?environment=staging`, { headers: as(AGENT_A_KEY) }), 400, 'BAD_REQUEST')
  await assertProxyError(t, await fetch(`${sidecar.url}/payments?state=done`, { headers: as(AGENT_A_KEY) }), 400, 'BAD_REQUEST')
  await assertProxyError(t, await fetch(`${sidecar.url}/payments?limit=0`, { headers: as(AGENT_A_KEY) }), 400, 'BAD_REQUEST')
  await assertProxyError(t, await fetch(`${sidecar.url}/payments?limit=1001`, { headers: as(AGENT_A_KEY) }), 400, 'BAD_REQUEST')
})
