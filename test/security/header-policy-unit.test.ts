import t from 'tap'
import {
  buildClientResponseHeaders, buildUpstreamHeaders, isDroppedHeader, MAX_REQUEST_HEADER_FIELDS, requestHeaderProblem,
} from '../../src/headers/header-policy.js'

t.test('buildUpstreamHeaders sends the proxy token and request id, and only business headers', async (t) => {
  const client = {
    host: 'api.example',
    'content-type': 'application/json',
    'content-length': '12',
    accept: 'application/json',
    'idempotency-key': 'abc',
    'x-request-id': 'client-chosen',
    authorization: 'Bearer client-token',
    'proxy-authorization': 'Basic eA==',
    cookie: 'session=1',
    'api-key': 'HC_stolen',
    connection: 'close, x-listed',
    'x-listed': 'hop',
  }
  const out = buildUpstreamHeaders(client, 'proxy-token', 'req-1')
  t.same(out, {
    host: 'api.example',
    'content-type': 'application/json',
    'content-length': '12',
    accept: 'application/json',
    'idempotency-key': 'abc',
    authorization: 'Bearer proxy-token',
    'x-request-id': 'req-1',
  })
  t.equal(client.authorization, 'Bearer client-token', 'the input is not modified')
})

t.test('isDroppedHeader drops credentials and their look-alikes', async (t) => {
  for (const name of ['authorization', 'proxy-authorization', 'cookie', 'api-key', 'api_key', 'apikey', 'x-api-key', 'x_api_key', 'x-apikey', 'api.key', 'x-hc-api-key']) {
    t.equal(isDroppedHeader(name), true, name)
  }
})

t.test('isDroppedHeader drops forwarding and client identity headers', async (t) => {
  for (const name of ['forwarded', 'via', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'x-real-ip', 'true-client-ip', 'x-client-ip', 'cf-connecting-ip']) {
    t.equal(isDroppedHeader(name), true, name)
  }
})

t.test('isDroppedHeader drops hop-by-hop headers (RFC 9110 §7.6.1) and Expect', async (t) => {
  for (const name of ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings', 'expect']) {
    t.equal(isDroppedHeader(name), true, name)
  }
})

t.test('isDroppedHeader drops path and method overrides that could bypass the token-endpoint block or the retry rules', async (t) => {
  for (const name of ['x-original-url', 'x-rewrite-url', 'x-http-method-override', 'x-http-method', 'x-method-override']) {
    t.equal(isDroppedHeader(name), true, name)
  }
})

t.test('isDroppedHeader keeps business headers', async (t) => {
  for (const name of ['content-type', 'content-length', 'accept', 'accept-encoding', 'idempotency-key', 'user-agent', 'x-request-id', 'traceparent', 'x-keyring', 'public-key']) {
    t.equal(isDroppedHeader(name), false, name)
  }
})

t.test('GHSA-gwhp-pf74-vj37: a client listing authorization in Connection cannot strip the proxy token', async (t) => {
  const out = buildUpstreamHeaders({ connection: 'close, authorization, x-request-id', authorization: 'Bearer client' }, 'proxy-token', 'req-1')
  t.equal(out.authorization, 'Bearer proxy-token')
  t.equal(out['x-request-id'], 'req-1')
  t.equal(out.connection, undefined)
})

t.test('buildUpstreamHeaders drops names listed in Connection, whatever their case and spacing', async (t) => {
  const out = buildUpstreamHeaders({ connection: ' X-One ,x-two,, ', 'x-one': '1', 'x-two': '2', 'x-three': '3' }, 'tok', 'id')
  t.same(Object.keys(out).sort(), ['authorization', 'content-type', 'x-request-id', 'x-three'])
})

t.test('buildUpstreamHeaders adds the provider\'s Content-Type when the client sent none, and keeps the client\'s', async (t) => {
  t.equal(buildUpstreamHeaders({ accept: 'application/json' }, 'tok', 'id')['content-type'], 'application/json')
  t.equal(buildUpstreamHeaders({ 'content-type': 'application/json; charset=utf-8' }, 'tok', 'id')['content-type'], 'application/json; charset=utf-8')
  t.equal(buildUpstreamHeaders({ 'content-type': 'text/plain' }, 'tok', 'id')['content-type'], 'text/plain')
})

t.test('buildClientResponseHeaders leaves the upstream connection headers behind and keeps the rest', async (t) => {
  const upstream = {
    'content-type': 'application/json',
    'content-length': '10',
    'set-cookie': ['a=1', 'b=2'],
    'retry-after': '1',
    location: 'http://elsewhere.example/',
    connection: 'keep-alive, X-Upstream-Hop',
    'keep-alive': 'timeout=5',
    'transfer-encoding': 'chunked',
    'proxy-connection': 'keep-alive',
    upgrade: 'h2c',
    trailer: 'x-checksum',
    'x-upstream-hop': '1',
  }
  t.same(buildClientResponseHeaders(upstream), {
    'content-type': 'application/json',
    'content-length': '10',
    'set-cookie': ['a=1', 'b=2'],
    'retry-after': '1',
    location: 'http://elsewhere.example/',
  })
  t.equal(upstream.connection, 'keep-alive, X-Upstream-Hop', 'the input is not modified')
})

t.test('requestHeaderProblem refuses a second Host (RFC 9112 §3.2) and too many fields', async (t) => {
  t.equal(requestHeaderProblem(['Host', 'a', 'Accept', '*/*']), null)
  t.same(requestHeaderProblem(['HOST', 'a', 'Accept', '*/*', 'host', 'a']), { status: 400, reason: 'more than one Host header field' }, 'even the same value twice')
  t.same(requestHeaderProblem(['Host', '127.0.0.1', 'host', 'evil.example']), { status: 400, reason: 'more than one Host header field' })
  const many = Array.from({ length: MAX_REQUEST_HEADER_FIELDS + 1 }, (_, i) => [`x-h${i}`, '1']).flat()
  t.match(requestHeaderProblem(many), { status: 431 })
  t.equal(requestHeaderProblem(many.slice(2)), null, 'exactly the maximum is accepted')
})
