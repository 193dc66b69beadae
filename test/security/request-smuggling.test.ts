import t from 'tap'
import { assertProxyError } from '../helpers/proxy-error.js'
import { assertNothingForwarded, assertRefused, assertStillServes, send, startRig } from './rig.js'

/**
 * Requests whose framing two HTTP parsers could read differently (RFC 9112 §6.1, §6.3, §5.2):
 * Node's strict parser answers 400 and closes the connection, so nothing smuggled inside reaches
 * the provider. Never enable `insecureHTTPParser`: these rows are here to notice if someone does.
 * Each carries a second request aimed at the token endpoint inside what might be read as a body.
 */
const SMUGGLED = 'GET /sandbox/fiat/auth/generate-bearer-token HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'

function post (headers: string[], body: string): string {
  return ['POST /sandbox/fiat/v1/payouts HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', ...headers, '', body].join('\r\n')
}

const CASES: Array<[string, string]> = [
  ['Content-Length with Transfer-Encoding', post(['Content-Length: 5', 'Transfer-Encoding: chunked'], `0\r\n\r\n${SMUGGLED}`)],
  ['Transfer-Encoding with Content-Length', post(['Transfer-Encoding: chunked', 'Content-Length: 200'], `0\r\n\r\n${SMUGGLED}`)],
  ['duplicate Content-Length, same value', post(['Content-Length: 2', 'Content-Length: 2'], '{}')],
  ['duplicate Content-Length, different values', post(['Content-Length: 2', `Content-Length: ${2 + SMUGGLED.length}`], `{}${SMUGGLED}`)],
  ['Content-Length list', post(['Content-Length: 2, 2'], '{}')],
  ['Content-Length: +2', post(['Content-Length: +2'], '{}')],
  ['Content-Length: -1', post(['Content-Length: -1'], '{}')],
  ['Content-Length: 0x2', post(['Content-Length: 0x2'], '{}')],
  ['space before the colon', post(['Content-Length : 2'], '{}')],
  ['obs-fold (folded header)', post(['Content-Length: 2', 'X-Folded: a', ' Transfer-Encoding: chunked'], '{}')],
  ['folded Transfer-Encoding', post(['Transfer-Encoding:', ' chunked'], `0\r\n\r\n${SMUGGLED}`)],
  ['bare CR inside a value', post(['Content-Length: 2', 'X-A: a\rTransfer-Encoding: chunked'], '{}')],
  ['bare CR ending a line', 'POST /sandbox/fiat/v1/payouts HTTP/1.1\rHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}'],
  ['Transfer-Encoding: xchunked', post(['Transfer-Encoding: xchunked'], `0\r\n\r\n${SMUGGLED}`)],
  ['Transfer-Encoding: chunked, identity', post(['Transfer-Encoding: chunked, identity'], `0\r\n\r\n${SMUGGLED}`)],
  ['duplicate Transfer-Encoding', post(['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'], `0\r\n\r\n${SMUGGLED}`)],
  ['chunk size with junk', post(['Transfer-Encoding: chunked'], `2;\n\r\n{}\r\n0\r\n\r\n${SMUGGLED}`)],
  ['NUL in a header value', post(['Content-Length: 2', 'X-A: a\u0000b'], '{}')],
]

t.test('ambiguous framing gets 400 from the parser and nothing, smuggled or not, reaches the provider', async (t) => {
  const rig = await startRig(t)
  for (const [label, bytes] of CASES) {
    const res = await assertRefused(t, rig, bytes, 400, 'BAD_REQUEST', label)
    t.equal(res.headers.connection, 'close', `${label}: Connection: close`)
  }
})

t.test('a second Host header gets 400 (RFC 9112 §3.2) and nothing is forwarded', async (t) => {
  const rig = await startRig(t)
  for (const hosts of [['127.0.0.1', 'evil.example'], ['evil.example', '127.0.0.1'], ['127.0.0.1', '127.0.0.1']]) {
    const label = `Host: ${hosts.join(' + Host: ')}`
    const res = await send(rig, ['GET /sandbox/fiat/v1/ping HTTP/1.1', ...hosts.map((h) => `Host: ${h}`), '', ''].join('\r\n'))
    await assertProxyError(t, res, 400, 'INVALID_HEADERS', label)
    assertNothingForwarded(t, rig, label)
    await assertStillServes(t, rig, label)
  }
})
