/**
 * BAD_INPUTS "Callers, limits and idempotency", the amount rows, over real sockets: an agent trying
 * every way around its amount limits. Each is refused, nothing reaches the provider, and a warn
 * line names the caller and the code.
 */
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import { payoutAgentCallersFile } from './payout-agent.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { providerEnv, startProvider, startProxy, waitReady, type RunningProxy } from '../helpers/harness.js'
import type { FakeProvider } from '../../src/fake-provider/index.js'

const KEY = 'pak_evasive-agent-key-0123456789abcdefghijklmnopqrstu'
const PATH = '/sandbox/fiat/payouts'

async function rig (t: Test): Promise<{ provider: FakeProvider, proxy: RunningProxy }> {
  const file = payoutAgentCallersFile('evasive-agent', KEY)
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider, { PROXY_CALLERS_FILE: file }))
  await waitReady(proxy)
  return { provider, proxy }
}

interface Answer { status: number, headers: Record<string, string | string[] | undefined>, body: string }

/** node:http, so the request carries exactly the headers given (no Content-Type unless named). */
function post (proxy: RunningProxy, body: string | Buffer, headers: OutgoingHttpHeaders = { 'content-type': 'application/json' }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${proxy.url}${PATH}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }) })
    })
    req.on('error', reject)
    req.end(body)
  })
}

let reference = 0
const payout = (amount: string, currency = 'KES'): string => `{"externalReference":"ev-${++reference}","amount":${amount},"currency":"${currency}"}`

async function assertRefusedAndAudited (t: Test, setup: { provider: FakeProvider, proxy: RunningProxy }, answer: Answer, status: number, code: string, label: string): Promise<void> {
  await assertProxyError(t, answer, status, code, label)
  t.same(setup.provider.upstreamRequests, [], `${label}: nothing forwarded`)
  const warned = setup.proxy.logs.records.some((r) => r.msg === 'caller refused' && r['level'] === 40 && r['caller'] === 'evasive-agent' && r['code'] === code)
  t.ok(warned, `${label}: a warn line names the caller and the code`)
}

t.test('a body the proxy cannot read unambiguously is 400 AMOUNT_UNREADABLE, never forwarded', async (t) => {
  const setup = await rig(t)
  const duplicate = '{"externalReference":"ev-dup","amount":1,"amount":50000,"currency":"KES"}'
  const cases: Array<[string, string | Buffer, OutgoingHttpHeaders?]> = [
    ['a repeated amount member', duplicate],
    ['a gzip body', gzipSync(payout('1')), { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
    ['a deflate body', deflateSync(payout('1')), { 'content-type': 'application/json', 'content-encoding': 'deflate' }],
    ['a br body', brotliCompressSync(payout('1')), { 'content-type': 'application/json', 'content-encoding': 'br' }],
    ['an array root', `[${payout('1')}]`],
    ['a string root', '"{\\"amount\\":1,\\"currency\\":\\"KES\\"}"'],
  ]
  for (const amount of ['-5', '1e400', '1e3', '"NaN"', '"1,000"', '" 5"', '"0x10"', 'true', '[]']) cases.push([`the amount ${amount}`, payout(amount)])
  for (const [label, body, headers] of cases) {
    await assertRefusedAndAudited(t, setup, await post(setup.proxy, body, headers), 400, 'AMOUNT_UNREADABLE', label)
  }
})

t.test('a JSON body sent as text/plain or without Content-Type is judged all the same', async (t) => {
  const setup = await rig(t)
  await assertRefusedAndAudited(t, setup, await post(setup.proxy, payout('101'), { 'content-type': 'text/plain' }), 403, 'AMOUNT_LIMIT_EXCEEDED', 'text/plain over the per-request limit')
  await assertRefusedAndAudited(t, setup, await post(setup.proxy, payout('101'), {}), 403, 'AMOUNT_LIMIT_EXCEEDED', 'no Content-Type, over the per-request limit')
  t.equal((await post(setup.proxy, payout('100'), {})).status, 200, 'no Content-Type, within the limit: forwarded')
  t.equal(setup.provider.upstreamRequests.length, 1)
})

t.test('"0.1" then "0.2" against a day limit of "0.3" both pass; a third "0.01" is refused', async (t) => {
  const setup = await rig(t)
  t.equal((await post(setup.proxy, payout('"0.1"', 'USD'))).status, 200)
  t.equal((await post(setup.proxy, payout('"0.2"', 'USD'))).status, 200, 'no float drift: 0.1 + 0.2 is 0.3')
  setup.provider.upstreamRequests.length = 0
  await assertRefusedAndAudited(t, setup, await post(setup.proxy, payout('"0.01"', 'USD')), 403, 'AMOUNT_LIMIT_EXCEEDED', 'the third')
})

t.test('20 payouts in parallel against a day limit that admits 5: exactly 5 forwarded', async (t) => {
  const setup = await rig(t)
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await post(setup.proxy, payout('100'))))
  t.equal(answers.filter((a) => a.status === 200).length, 5, '5 × 100 = 500, the day limit')
  t.equal(setup.provider.upstreamRequests.length, 5, 'exactly 5 reached the provider')
  for (const refused of answers.filter((a) => a.status !== 200)) await assertProxyError(t, refused, 403, 'AMOUNT_LIMIT_EXCEEDED', 'past the day limit')
})
