import t from 'tap'
import { createHash } from 'node:crypto'
import type { Server } from 'node:net'
import type { Test } from 'tap'
import { DEFAULT_BODY_LIMIT_BYTES } from '../../src/config/schema.js'
import { eventually } from '../helpers/eventually.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { assertNothingForwarded, assertStillServes, startRig } from './rig.js'
import { exchange, open, readResponse, type RawResponse } from './raw-client.js'
import { startRecordingUpstream } from './recording-upstream.js'

/**
 * @fastify/http-proxy's raw body parser skips Fastify's bodyLimit, so the proxy applies its own
 * (PROXY_BODY_LIMIT_BYTES, default 1 MiB) to the stream it forwards. The crypto base points at a
 * recording upstream that sees every connection and every request from its first byte.
 */
const LIMIT = DEFAULT_BODY_LIMIT_BYTES

async function startBodyRig (t: Test, env: Record<string, string> = {}) {
  const upstream = await startRecordingUpstream(t)
  const rig = await startRig(t, { PAYMENTS_CRYPTO_BASE_URL: upstream.baseUrl, ...env })
  return { rig, upstream }
}

t.test('a Content-Length over the limit gets 413 BODY_TOO_LARGE before any upstream connection', async (t) => {
  const { rig, upstream } = await startBodyRig(t)
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    for (const contentType of ['application/json', 'application/octet-stream', null]) {
      const label = `${method} ${contentType ?? 'without Content-Type'}`
      const head = [`${method} /production/crypto/v1/upload HTTP/1.1`, 'Host: 127.0.0.1', ...(contentType === null ? [] : [`Content-Type: ${contentType}`]), `Content-Length: ${LIMIT + 1}`, '', ''].join('\r\n')
      // Only the head and a first slice of the body: the answer must not wait for the rest.
      const res = await exchange(rig.proxy.port, head + '{"amount":'.padEnd(1024, ' '))
      await assertProxyError(t, res, 413, 'BODY_TOO_LARGE', label)
      t.equal(upstream.connections, 0, `${label}: no upstream connection`)
      assertNothingForwarded(t, rig, label)
    }
  }
  await assertStillServes(t, rig, 'after 413s')
})

/** Sends a chunked body in 64 KiB chunks until it is one chunk past the limit or the proxy stops reading. */
async function sendChunkedPastLimit (t: Test, port: number, contentType: string): Promise<RawResponse | null> {
  const { socket } = open(port)
  t.teardown(() => socket.destroy())
  const response = readResponse(socket).catch(() => null)
  socket.write(['POST /production/crypto/v1/upload HTTP/1.1', 'Host: 127.0.0.1', `Content-Type: ${contentType}`, 'Transfer-Encoding: chunked', '', ''].join('\r\n'))
  const chunk = `${(64 * 1024).toString(16)}\r\n${'a'.repeat(64 * 1024)}\r\n`
  for (let sent = 0; sent <= LIMIT + 64 * 1024 && socket.writable; sent += 64 * 1024) {
    await new Promise<void>((resolve) => socket.write(chunk, () => resolve()))
  }
  const res = await response
  socket.destroy()
  return res
}

/** A reset is not an answer: the 413 must have reached the client, with the connection closed after it. */
async function assertReceived413 (t: Test, res: RawResponse | null, label: string): Promise<void> {
  if (res === null) {
    t.fail(`${label}: the connection was reset before the 413 arrived`)
    return
  }
  await assertProxyError(t, res, 413, 'BODY_TOO_LARGE', label)
  t.equal(res.headers.connection, 'close', `${label}: Connection: close after the 413`)
}

function openConnections (server: Server): Promise<number> {
  return new Promise<number>((resolve) => { server.getConnections((_err, n) => { resolve(n) }) })
}

// With idempotency on (the default) every POST body is held, to be read as JSON whatever its type
// (SPEC §8): only with it off does a POST of another type stream.
t.test('a chunked body growing past the limit: a JSON one (held) never reaches the upstream, another type is aborted when it crosses (PROXY_IDEMPOTENCY=off)', async (t) => {
  const { rig, upstream } = await startBodyRig(t, { PROXY_IDEMPOTENCY: 'off' })
  const held = await sendChunkedPastLimit(t, rig.proxy.port, 'application/json')
  await assertReceived413(t, held, 'application/json')
  t.equal(upstream.requests.length, 0, 'application/json: held for a possible retry, so the upstream was never contacted')
  const streamed = await sendChunkedPastLimit(t, rig.proxy.port, 'application/octet-stream')
  await assertReceived413(t, streamed, 'application/octet-stream')
  const forwarded = await upstream.settled(upstream.requests.length)
  t.equal(forwarded.state, 'aborted', 'application/octet-stream: upstream request aborted')
  t.ok(forwarded.bytes <= LIMIT, `application/octet-stream: upstream got at most the limit (${forwarded.bytes} bytes)`)
  t.equal(upstream.requests.length, 1, 'one upstream attempt for the streamed one, no retry')
  await eventually(async () => await openConnections(rig.proxy.app.server) === 0, { what: 'the proxy to let go of both client connections', timeoutMs: 1000 })
  t.pass('the proxy let go of both client connections (no connection stalled on an unread body)')
  t.equal(rig.provider.tokenRequests.length, rig.startupTokenRequests, 'no token request')
  await assertStillServes(t, rig, 'after cut-off bodies')
})

t.test('a chunked body growing past the limit gets 413 BODY_TOO_LARGE, received by the client, not a reset or a 502', async (t) => {
  const { rig } = await startBodyRig(t)
  for (const contentType of ['application/json', 'application/octet-stream']) {
    await assertReceived413(t, await sendChunkedPastLimit(t, rig.proxy.port, contentType), contentType)
  }
  await assertStillServes(t, rig, 'after 413 on chunked bodies')
})

t.test('a body of exactly the default limit (1 MiB) is forwarded byte for byte, held or streamed', async (t) => {
  const { rig, upstream } = await startBodyRig(t)
  const body = Buffer.alloc(LIMIT)
  for (let i = 0; i < body.length; i++) body[i] = (i * 7919) & 0xff
  const sha256 = createHash('sha256').update(body).digest('hex')
  const cases: Array<[string, RequestInit]> = [
    ['POST application/json with Content-Length (held for a retry)', { method: 'POST', headers: { 'content-type': 'application/json' }, body }],
    ['PUT application/octet-stream with Content-Length', { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body }],
    ['POST chunked application/octet-stream (streamed)', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Blob([body]).stream(), duplex: 'half' }],
    ['POST chunked application/json (held for a retry)', { method: 'POST', headers: { 'content-type': 'application/json' }, body: new Blob([body]).stream(), duplex: 'half' }],
  ]
  for (const [label, init] of cases) {
    const res = await fetch(`${rig.proxy.url}/production/crypto/v1/upload`, init)
    t.equal(res.status, 200, `${label}: status`)
    t.same(await res.json(), { bytes: LIMIT, sha256 }, `${label}: identical upstream`)
  }
  t.equal(upstream.requests.length, cases.length, 'one upstream request each')
})
