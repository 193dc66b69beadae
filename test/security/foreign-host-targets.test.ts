import t from 'tap'
import { get, startRig, assertRefused, startForeignHost } from './rig.js'
import { request } from './raw-client.js'

/**
 * Targets that name another host: a network-path reference (`//host`), its backslash variant that
 * WHATWG URL parsers treat the same way, and absolute-form (RFC 9112 §3.2.2). The proxy must not
 * open a connection to the named host: a listening socket stands in for it and counts connections.
 */
t.test('//host, /\\host and absolute-form targets are refused without connecting to the named host', async (t) => {
  const foreign = await startForeignHost(t)
  const host = foreign.host

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
  t.equal(foreign.connections(), 0, 'the named host never got a connection')
})
