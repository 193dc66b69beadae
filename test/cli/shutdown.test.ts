import t from 'tap'
import { request } from 'undici'
import { connect } from 'node:net'
import { listeningPort, runCli, runNpmStart } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { deferred } from '../helpers/deferred.js'

t.test('SIGTERM: the in-flight request finishes, new requests are refused, exit 0 before the grace deadline', async (t) => {
  const provider = await startProvider(t)
  const { promise: held, resolve: release } = deferred()
  provider.setUpstreamHandler(async (req, res) => {
    if (!req.url?.includes('/slow')) return false
    await held
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"slow":true}')
    return true
  })
  const child = runCli(t, [], providerEnv(provider, { PROXY_SHUTDOWN_GRACE_SECONDS: '5', LOG_LEVEL: 'info' }))
  await child.waitFor(/ready to accept requests/)
  const port = listeningPort(child)
  await child.waitFor(/token obtained[\s\S]*token obtained/)

  const inflight = request(`http://127.0.0.1:${port}/fiat/v1/slow`)
  for (let i = 0; i < 200 && !provider.upstreamRequests.some((r) => r.url.includes('/slow')); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  const started = Date.now()
  child.process.kill('SIGTERM')
  await child.waitFor(/shutting down: draining in-flight requests/)

  const late = await request(`http://127.0.0.1:${port}/fiat/v1/after`).then(
    async (res) => ({ status: res.statusCode, code: res.headers['x-proxy-error'], body: await res.body.text() }),
    (err: NodeJS.ErrnoException) => ({ status: 0, code: err.code, body: '' }),
  )
  t.ok(late.status === 503 ? late.code === 'SHUTTING_DOWN' : late.code === 'ECONNREFUSED', `a new request is refused (${late.status} ${String(late.code)})`)

  release()
  const res = await inflight
  t.equal(res.statusCode, 200, 'the in-flight request completed')
  t.same(await res.body.json(), { slow: true })
  const { code } = await child.exited
  t.equal(code, 0, 'exit 0')
  t.ok(Date.now() - started < 5_000, 'stopped before the grace deadline')
  t.match(child.stdout(), /"msg":"stopped"/)
})

t.test('SIGTERM with a request that outlives the grace period: it is cut and the process still exits', async (t) => {
  const provider = await startProvider(t)
  provider.setUpstreamHandler(async (req) => req.url?.includes('/forever') === true)
  const child = runCli(t, [], providerEnv(provider, { PROXY_SHUTDOWN_GRACE_SECONDS: '1' }))
  await child.waitFor(/ready to accept requests/)
  await child.waitFor(/token obtained[\s\S]*token obtained/)
  const port = listeningPort(child)
  const stuck = request(`http://127.0.0.1:${port}/fiat/v1/forever`).then((r) => r.statusCode, () => 'cut')
  for (let i = 0; i < 200 && !provider.upstreamRequests.some((r) => r.url.includes('/forever')); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  child.process.kill('SIGTERM')
  const { code } = await child.exited
  t.equal(code, 0)
  t.equal(await stuck, 'cut', 'the stuck request was cut at the grace deadline')
})

// npm runs the script through `sh -c`, and sh does not pass SIGTERM on: without `exec` in the
// script, npm exited and left the proxy running without it, never drained, still on its port.
t.test('SIGTERM to `npm start` reaches the proxy: it drains, stops, and nothing is left listening', async (t) => {
  const provider = await startProvider(t)
  const child = runNpmStart(t, providerEnv(provider, { LOG_LEVEL: 'info' }))
  await child.waitFor(/ready to accept requests/, 20_000)
  const port = listeningPort(child)
  child.process.kill('SIGTERM')
  const { code } = await child.exited
  t.equal(code, 0, 'npm exits 0')
  t.match(child.stdout(), /shutting down: draining in-flight requests/)
  t.match(child.stdout(), /"msg":"stopped"/)
  const refused = await new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve('connected') })
    socket.once('error', (err: NodeJS.ErrnoException) => { resolve(err.code ?? 'error') })
  })
  t.equal(refused, 'ECONNREFUSED', 'the port is free: no proxy left behind')
})
