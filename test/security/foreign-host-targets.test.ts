import t from 'tap'
import { createServer } from 'node:net'
import { get, startRig, assertRefused } from './rig.js'
import { request } from './raw-client.js'

/**
 * Targets that name another host: a network-path reference (`//host`), its backslash variant that
 * WHATWG URL parsers treat the same way, and absolute-form (RFC 9112 §3.2.2). The proxy must not
 * open a connection to the named host: a listening socket stands in for it and counts connections.
 */
t.test('//host, /\\host and absolute-form targets are refused without connecting to the named host', async (t) => {
  let connections = 0
  const foreign = createServer((socket) => { connections++; socket.destroy() })
  await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => foreign.close(() => resolve())))
  const address = foreign.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  const host = `127.0.0.1:${address.port}`

  const rig = await startRig(t)
  const cases: Array<[string, string]> = [
    [`//${host}/x`, get(`//${host}/x`)],
    [`/\\${host}/x`, get(`/\\${host}/x`)],
    [`/production/fiat//${host}/x`, get(`/production/fiat//${host}/x`)],
    [`/production/fiat/\\\\${host}/x`, get(`/production/fiat/\\\\${host}/x`)],
    [`absolute-form http://${host}/production/fiat/x`, get(`http://${host}/production/fiat/x`)],
    [`absolute-form with Host ${host}`, `GET http://${host}/production/fiat/x HTTP/1.1\r\nHost: ${host}\r\n\r\n`],
    [`POST absolute-form http://${host}/`, request('POST', `http://${host}/`, ['Content-Length: 2'], '{}')],
  ]
  for (const [label, bytes] of cases) {
    await assertRefused(t, rig, bytes, 400, 'INVALID_PATH', label)
  }
  t.equal(connections, 0, 'the named host never got a connection')
})
