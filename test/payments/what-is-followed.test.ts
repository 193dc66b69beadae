/**
 * SPEC §12 "What is followed": a POST to a path of PROXY_PAYMENTS_PATHS whose body holds a reference
 * at §8's pointer, and nothing else; its amount and currency read as §7 reads them, null when they
 * cannot be, never a refusal.
 */
import t from 'tap'
import { paymentOf, setting, startInProcess } from './payments-harness.js'

t.test('only POSTs with a reference to PROXY_PAYMENTS_PATHS are followed; an unreadable amount or currency is stored as null', async (t) => {
  const { provider, env } = await setting(t, { PROXY_PAYMENTS_PATHS: '/v1/payouts/**,/v2/transfers/*' })
  const sidecar = await startInProcess(t, env)
  const send = async (method: string, path: string, body: unknown): Promise<Response> => await fetch(`${sidecar.url}/sandbox/fiat${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

  const followed = await send('POST', '/V1/Payouts/', { amount: '1,000', currency: 'KES', externalReference: 'followed-1' })
  t.equal(followed.status, 200)
  t.match(followed.headers.get('payment-id'), /^pay_/, 'the path\'s spelling does not matter (§3)')
  t.match(await paymentOf(sidecar.url, 'followed-1'), { amount: null, currency: 'KES', path: '/V1/Payouts/' }, 'not a plain decimal: null, and the request went on')
  t.equal((await send('POST', '/v1/payouts', { amount: 12.5, externalReference: 'followed-2' })).status, 200)
  t.match(await paymentOf(sidecar.url, 'followed-2'), { amount: '12.5', currency: null })

  for (const [method, path, body, why] of [
    ['POST', '/v1/collections', { amount: 1, currency: 'KES', externalReference: 'not-1' }, 'another path'],
    ['POST', '/v2/transfers', { amount: 1, currency: 'KES', externalReference: 'not-3' }, 'a path the pattern does not reach'],
    ['POST', '/v1/payouts', { amount: 1, currency: 'KES' }, 'no reference'],
    ['POST', '/v1/payouts', { amount: 1, currency: 'KES', externalReference: '' }, 'an empty reference'],
    ['PUT', '/v1/payouts/1', { amount: 1, currency: 'KES', externalReference: 'not-2' }, 'a PUT'],
    ['GET', '/v1/payouts', undefined, 'a GET'],
  ] as const) {
    const res = await send(method, path, body)
    t.equal(res.headers.get('payment-id'), null, `${why}: no Payment-Id`)
    await res.arrayBuffer()
  }
  const listed = await (await fetch(`${sidecar.url}/payments`)).json() as { payments: unknown[] }
  t.equal(listed.payments.length, 2, 'only the two followed ones')
  t.equal(provider.upstreamRequests.length, 8, 'every request was forwarded all the same')
})
