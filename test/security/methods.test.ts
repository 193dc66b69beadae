import t from 'tap'
import { connect } from 'node:net'
import { assertNothingForwarded, assertRefused, assertStillServes, send, startRig, startForeignHost } from './rig.js'
import { exchange, request } from './raw-client.js'
import { assertProxyError } from '../helpers/proxy-error.js'

t.test('TRACE is not proxied: it would echo the injected token back', async (t) => {
  const rig = await startRig(t)
  for (const target of ['/production/fiat/v1', '/fiat/v1', '/production/fiat/']) {
    const res = await send(rig, request('TRACE', target, ['Authorization: Bearer client']))
    await assertProxyError(t, res, 405, 'METHOD_NOT_ALLOWED', `TRACE ${target}`)
    t.notMatch(res.body, /Bearer/, `TRACE ${target}: no token echoed`)
    assertNothingForwarded(t, rig, `TRACE ${target}`)
    await assertStillServes(t, rig, `TRACE ${target}`)
  }
})

t.test('CONNECT opens no tunnel, neither to another host nor to the provider', async (t) => {
  const foreign = await startForeignHost(t)
  const rig = await startRig(t)
  const provider = new URL(rig.provider.fiatBaseUrl).host
  for (const authority of [foreign.host, provider]) {
    const label = `CONNECT ${authority}`
    // Without a 'connect' listener Node would close the socket with no answer at all.
    const res = await exchange(rig.proxy.port, `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`)
    const body = await assertProxyError(t, res, 405, 'METHOD_NOT_ALLOWED', label)
    t.equal(body?.error.message, 'Method CONNECT is not proxied', `${label}: the proxy's message`)
    assertNothingForwarded(t, rig, label)
    await assertStillServes(t, rig, label)
  }
  t.equal(foreign.connections(), 0, 'the CONNECT target never got a connection')
})

t.test('a refused CONNECT is closed by the proxy, even when the client keeps sending, so shutdown is not held up', async (t) => {
  const rig = await startRig(t)
  const socket = connect(rig.proxy.port, '127.0.0.1')
  socket.on('error', () => {})
  let received = ''
  socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
  const closedByServer = new Promise<void>((resolve) => { socket.once('end', () => { resolve() }) })
  socket.write('CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n')
  const flood = setInterval(() => { socket.write(Buffer.alloc(16 * 1024, 'x')) }, 5)
  t.teardown(() => { clearInterval(flood); socket.destroy() })
  await Promise.race([closedByServer, new Promise((_resolve, reject) => setTimeout(() => reject(new Error('the proxy left the CONNECT socket open')), 30_000))])
  clearInterval(flood)
  t.match(received, /^HTTP\/1\.1 405 /, 'answered 405 first')
  const count = await new Promise<number>((resolve, reject) => { rig.proxy.app.server.getConnections((err, n) => { if (err === null) resolve(n); else reject(err) }) })
  t.equal(count, 0, 'no connection left on the server')
  const closing = rig.proxy.app.close()
  await Promise.race([closing, new Promise((_resolve, reject) => setTimeout(() => reject(new Error('close() held up')), 2000))])
  t.pass('the server closes promptly')
})

t.test('OPTIONS * (asterisk-form) gets a 4xx and is not forwarded', async (t) => {
  const rig = await startRig(t)
  await assertRefused(t, rig, 'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 400, 'INVALID_PATH', 'OPTIONS *')
})
