import t from 'tap'
import { connect } from 'node:net'
import { request as undiciRequest } from 'undici'
import { listeningPort, runCli, runNpmStart } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { deferred } from '../helpers/deferred.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { open, parseResponses, request } from '../security/raw-client.js'
import { eventually } from '../helpers/eventually.js'

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

  // One kept-alive connection carries the slow request, and a second one pipelined after SIGTERM:
  // the server cannot close it as idle, so the second request is answered, and it must be refused.
  const { socket, closed } = open(port)
  t.teardown(() => socket.destroy())
  socket.write(request('GET', '/fiat/v1/slow'))
  await eventually(() => provider.upstreamRequests.some((r) => r.url.includes('/slow')), { what: 'the slow request upstream' })
  const started = Date.now()
  child.process.kill('SIGTERM')
  await child.waitFor(/shutting down: draining in-flight requests/)
  socket.write(request('GET', '/fiat/v1/after'))
  const fresh = await fetch(`http://127.0.0.1:${port}/fiat/v1/fresh`).then((res) => `${res.status}`, (err: Error & { cause?: { code?: string } }) => err.cause?.code ?? err.message)
  t.equal(fresh, 'ECONNREFUSED', 'a new connection is refused: the listener is closed')

  release()
  const [slow, after, ...more] = parseResponses((await closed).raw)
  t.equal(slow?.status, 200, 'the in-flight request completed')
  t.same(JSON.parse(slow?.body ?? 'null'), { slow: true })
  if (after === undefined) t.fail('no answer to the request sent on the kept-alive connection during shutdown')
  else {
    await assertProxyError(t, after, 503, 'SHUTTING_DOWN', 'a request on a kept-alive connection after SIGTERM')
    t.equal(after.headers['retry-after'], '1', 'Retry-After')
  }
  t.same(more, [], 'nothing else on the connection')
  t.notOk(provider.upstreamRequests.some((r) => r.url.includes('/after') || r.url.includes('/fresh')), 'neither refused request was forwarded')
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
  let signalled = 0
  const stuck = undiciRequest(`http://127.0.0.1:${port}/fiat/v1/forever`).then((r) => r.statusCode, () => 'cut')
  const cutAfterMs = stuck.then(() => Date.now() - signalled)
  await eventually(() => provider.upstreamRequests.some((r) => r.url.includes('/forever')), { what: 'the stuck request upstream' })
  signalled = Date.now()
  child.process.kill('SIGTERM')
  const { code } = await child.exited
  const exitedAfterMs = Date.now() - signalled
  t.equal(code, 0)
  t.equal(await stuck, 'cut', 'the stuck request was cut')
  const cutMs = await cutAfterMs
  t.ok(cutMs >= 900 && cutMs < 2500, `cut ${cutMs} ms after SIGTERM: at the 1 s grace deadline, not before, not long after`)
  t.ok(exitedAfterMs < 3000, `and the process exited ${exitedAfterMs} ms after SIGTERM`)
})

// npm runs the script through `sh -c`, and sh does not pass SIGTERM on: without `exec` in the
// script, npm exited and left the proxy running without it, never drained, still on its port.
t.test('SIGTERM to `npm start` reaches the proxy: it drains, stops, and nothing is left listening', async (t) => {
  const provider = await startProvider(t)
  const child = runNpmStart(t, providerEnv(provider, { LOG_LEVEL: 'info' }))
  await child.waitFor(/ready to accept requests/)
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
