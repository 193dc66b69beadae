/**
 * Issue 43 item 17: the demo's fake provider listens on free ports unless FAKE_PROVIDER_FIAT_PORT,
 * _CRYPTO_PORT and _IP_PORT pin them (the names its own process reads); the demo says where they
 * are, and a pinned port in use, or one that is not a port, is one line and exit 1.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { eventually } from '../helpers/eventually.js'
import { freePort, holdPort } from '../helpers/ports.js'

const DEMO = fileURLToPath(new URL('../../dist/demo.js', import.meta.url))

function demo (t: Test, env: Record<string, string>): { output: () => string, exited: Promise<number | null> } {
  const child = spawn(process.execPath, [DEMO], { env: { PATH: process.env['PATH'], ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (c: Buffer) => { output += c.toString('utf8') })
  child.stderr.on('data', (c: Buffer) => { output += c.toString('utf8') })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  return { output: () => output, exited: once(child, 'exit').then(([code]) => code as number | null) }
}

t.test('pinned ports: the fake provider listens there, the demo says so and the proxy uses it', async (t) => {
  const [proxy, fiat, crypto, ip] = await Promise.all([freePort(), freePort(), freePort(), freePort()])
  const run = demo(t, { PROXY_PORT: String(proxy), FAKE_PROVIDER_FIAT_PORT: String(fiat), FAKE_PROVIDER_CRYPTO_PORT: String(crypto), FAKE_PROVIDER_IP_PORT: String(ip) })
  await eventually(() => run.output().includes('Ctrl-C stops everything'), { what: 'the demo\'s instructions', timeoutMs: 20_000, detail: run.output })
  t.match(run.output(), `fiat http://127.0.0.1:${fiat}/api/b2b, crypto http://127.0.0.1:${crypto}/api, IP echo http://127.0.0.1:${ip}/ip.`)
  t.equal((await (await fetch(`http://127.0.0.1:${ip}/ip`)).text()).trim(), '203.0.113.7', 'the IP echo on its pinned port')
  await eventually(async () => (await fetch(`http://127.0.0.1:${proxy}/readyz`)).status === 200, { what: 'the proxy ready', timeoutMs: 10_000 })
  const balance = await fetch(`http://127.0.0.1:${proxy}/fiat/v1/accounts/balance?currency=KES`)
  t.equal(balance.status, 200, 'proxied to the pinned fiat port')
})

t.test('a pinned port in use, or a value that is not a port, is one line and exit 1', async (t) => {
  const taken = await holdPort(t)
  for (const [env, line] of [
    [{ FAKE_PROVIDER_CRYPTO_PORT: String(taken) }, `payments-auth-proxy demo: port ${taken} is in use (FAKE_PROVIDER_CRYPTO_PORT)`],
    [{ FAKE_PROVIDER_IP_PORT: '40a0' }, 'payments-auth-proxy demo: FAKE_PROVIDER_IP_PORT must be a port number (0-65535), got "40a0"'],
  ] as const) {
    const run = demo(t, { PROXY_PORT: String(await freePort()), ...env })
    t.equal(await run.exited, 1)
    t.same(run.output().trim().split('\n'), [line])
  }
})
