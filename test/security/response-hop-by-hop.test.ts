import t from 'tap'
import { assertStillServes, startRig } from './rig.js'
import { open, readResponse } from './raw-client.js'

/**
 * The upstream connection's hop-by-hop headers (RFC 9110 §7.6.1) must not be relayed: an upstream
 * `Connection: keep-alive` overrides the client's `Connection: close` (Node keeps the socket open
 * for its keep-alive timeout), and `Keep-Alive: timeout=` describes a connection the client is not on.
 */
t.test('the upstream connection headers are not relayed and the client\'s Connection: close is honoured', {
}, async (t) => {
  const rig = await startRig(t)
  rig.provider.setUpstreamHandler((_req, res) => {
    res.writeHead(200, {
      'content-type': 'application/json',
      connection: 'keep-alive, X-Upstream-Hop',
      'keep-alive': 'timeout=600',
      'x-upstream-hop': '1',
      'proxy-connection': 'keep-alive',
      'x-end-to-end': 'kept',
      'content-length': '2',
    })
    res.end('{}')
    return true
  })
  const { socket, closed } = open(rig.proxy.port)
  t.teardown(() => socket.destroy())
  const response = readResponse(socket)
  socket.write('GET /sandbox/fiat/v1/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
  const res = await response
  t.equal(res.status, 200, 'status')
  t.equal(res.headers['x-end-to-end'], 'kept', 'end-to-end header relayed')
  for (const name of ['keep-alive', 'x-upstream-hop', 'proxy-connection']) t.equal(res.headers[name], undefined, `${name} not relayed`)
  t.equal(res.headers.connection, 'close', 'the proxy answers for its own connection')
  const closedIn = await Promise.race([closed.then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 1000, 'open'))])
  t.equal(closedIn, 'closed', 'the connection is closed after the response')
  rig.provider.setUpstreamHandler(null)
  await assertStillServes(t, rig, 'after relaying a response')
})
