import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { MAX_TIMER_MS } from '../../src/clock.js'
import { signJwt, type TokenHandler } from '../../src/fake-provider/index.js'
import { DEMO_CREDENTIALS } from '../helpers/harness.js'
import { send, startTimed } from './token-kit.js'
import { assertProxyError } from '../helpers/proxy-error.js'

/** Appears in every bad body and bad token: no log line may ever contain it. */
const MARKER = 'BODY-MARKER-7f3a'

interface BadAnswer { status?: number, contentType?: string, headers?: Record<string, string>, body: (nowS: number) => string }

const json = (fields: (nowS: number) => Record<string, unknown>): BadAnswer['body'] => (nowS) =>
  JSON.stringify({ success: true, token: signJwt({ exp: nowS + 7200, m: MARKER }, 'k'), expiresAt: nowS + 7200, ...fields(nowS) })

const BAD: Array<[string, BadAnswer, string]> = [
  ['an HTML page', { contentType: 'text/html', body: () => `<html><body>${MARKER}</body></html>` }, 'not_json'],
  ['malformed JSON', { body: () => `{not json ${MARKER}` }, 'not_json'],
  ['success: false', { body: json(() => ({ success: false, message: MARKER })) }, 'success_false'],
  ['a token that is not a JWT', { body: json(() => ({ token: `opaque-${MARKER}` })) }, 'bad_token'],
  ['a token with CR/LF', { body: json((s) => ({ token: `${signJwt({ exp: s + 7200 }, 'k')}\r\nx-injected: ${MARKER}` })) }, 'bad_token'],
  ['a 100 KB token', { body: json(() => ({ token: `${signJwt({ m: MARKER }, 'k')}${'A'.repeat(100 * 1024)}` })) }, 'too_large'],
  ['an empty token', { body: json(() => ({ token: '' })) }, 'bad_token'],
  ['expiresAt in the past', { body: json((s) => ({ expiresAt: s - 60 })) }, 'expired'],
  ['expiresAt null', { body: json(() => ({ expiresAt: null })) }, 'bad_expires_at'],
  ['expiresAt a string', { body: json((s) => ({ expiresAt: String(s + 7200) })) }, 'bad_expires_at'],
  ['expiresAt a float', { body: json((s) => ({ expiresAt: s + 7200.5 })) }, 'bad_expires_at'],
  ['expiresAt in milliseconds', { body: json((s) => ({ expiresAt: (s + 7200) * 1000 })) }, 'expires_at_in_milliseconds'],
  ['HTTP 500', { status: 500, body: () => JSON.stringify({ success: false, message: MARKER }) }, 'http_status'],
  ['HTTP 401', { status: 401, body: () => JSON.stringify({ success: false, message: MARKER }) }, 'rejected'],
]

/** The provider's clock, read from the Date header the fake provider set on this response. */
function providerNowS (res: http.ServerResponse): number {
  return Date.parse(String(res.getHeader('date'))) / 1000
}

function answer (bad: BadAnswer): TokenHandler {
  return (_req, res) => {
    const body = bad.body(providerNowS(res))
    res.writeHead(bad.status ?? 200, { 'content-type': bad.contentType ?? 'application/json', 'content-length': Buffer.byteLength(body), ...bad.headers })
    res.end(body)
    return true
  }
}

for (const [name, bad, reason] of BAD) {
  t.test(`a token response with ${name} is rejected, logged without its body, never cached`, async (t) => {
    const { driver, provider, proxy } = await startTimed(t, { prepare: (p) => { p.setTokenHandler(answer(bad)) } })

    const failures = proxy.logs.find('token refresh failed')
    t.equal(failures.length, 1, 'one failure logged')
    const line = failures[0] ?? {}
    t.equal(line['reason'], reason, 'the reason')
    t.equal(line['status'], bad.status ?? 200, 'the status')
    t.equal(line['contentType'], bad.contentType ?? 'application/json', 'the content type')
    t.ok(Number(line['length']) > 0, 'the length')
    t.notOk(proxy.logs.lines.some((l) => l.includes(MARKER)), 'no log line holds the body or the token')

    const ready = await send(proxy, '/readyz')
    t.equal(ready.status, 503, '/readyz says not ready')
    const res = await send(proxy, '/sandbox/fiat/v1/a')
    await assertProxyError(t, res, 503, 'TOKEN_UNAVAILABLE', 'requests get 503')
    t.notOk(res.body.includes(MARKER), 'nor does the error body')
    t.equal(provider.upstreamRequests.length, 0, 'nothing was forwarded with the bad token')

    await driver.advance(500)
    t.equal(provider.tokenRequests.length, 2, 'the next attempt, 0.5 s later, asks the token endpoint again')
    t.equal((await send(proxy, '/readyz')).status, 503, 'still not ready')

    provider.setTokenHandler(null)
    await driver.advance(2_000)
    t.equal((await send(proxy, '/readyz')).status, 200, 'ready once the endpoint answers properly')
    t.equal((await send(proxy, '/sandbox/fiat/v1/a')).status, 200)
  })
}

const FAR: Array<[string, (nowS: number) => number]> = [
  ['the year 9999', () => Date.UTC(9999, 11, 31, 23, 59, 59) / 1000],
  ['48 h from now', (nowS) => nowS + 48 * 3600],
]

for (const [name, expiresAt] of FAR) {
  t.test(`an expiresAt in ${name} is believed only up to the 24 h cap, with no timer beyond 2^31-1 ms`, async (t) => {
    const handler: TokenHandler = (_req, res) => {
      const body = JSON.stringify({ success: true, token: signJwt({ n: Math.random() }, 'k'), expiresAt: expiresAt(providerNowS(res)) })
      res.writeHead(200, { 'content-type': 'application/json' }).end(body)
      return true
    }
    const { driver, provider, proxy } = await startTimed(t, { prepare: (p) => { p.setTokenHandler(handler) } })
    const grant = proxy.sources.get('sandbox')?.currentGrant()
    t.equal(grant?.lifetimeS, 24 * 3600, 'lifetime capped at PROXY_TOKEN_MAX_LIFETIME_SECONDS')
    const ready = JSON.parse((await send(proxy, '/readyz')).body) as { environments: { sandbox: { expiresAt: number } } }
    t.equal(ready.environments.sandbox.expiresAt, expiresAt(Math.floor(driver.wallMs() / 1000)), '/readyz reports the provider value')

    await driver.advance(24 * 3600_000 - 300_000 - 1)
    t.equal(provider.tokenRequests.length, 1, 'no refresh before the capped margin')
    await driver.advance(1)
    t.equal(provider.tokenRequests.length, 2, 'refreshed 300 s before the capped expiry')
    t.ok(driver.maxTimerMs <= MAX_TIMER_MS, `longest timer ${driver.maxTimerMs} ms <= 2^31-1`)
  })
}

t.test('a 307 from the token endpoint is not followed and the API key never reaches the other host', async (t) => {
  const elsewhere: http.IncomingMessage[] = []
  const thief = http.createServer((req, res) => { elsewhere.push(req); res.end('{}') })
  await new Promise<void>((resolve) => thief.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { thief.closeAllConnections(); thief.close(() => resolve()) }))
  const location = `http://127.0.0.1:${(thief.address() as AddressInfo).port}/steal`

  const { driver, provider, proxy } = await startTimed(t, {
    prepare: (p) => { p.setTokenHandler((_req, res) => { res.writeHead(307, { location, 'content-length': 0 }).end(); return true }) },
  })
  await driver.advance(10_000)
  t.ok(provider.tokenRequests.length >= 3, 'retried with backoff')
  t.same(elsewhere, [], 'the other host received nothing')
  const line = proxy.logs.find('token refresh failed')[0] ?? {}
  t.match(line, { reason: 'redirect', status: 307 }, 'logged as a redirect')
  t.notOk(proxy.logs.lines.some((l) => l.includes(DEMO_CREDENTIALS.sandbox.apiKey)), 'the API key is never logged')
  t.equal((await send(proxy, '/readyz')).status, 503)
})
