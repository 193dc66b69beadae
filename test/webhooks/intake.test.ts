/**
 * The intake of SPEC §10 over real sockets: what is stored and answered, the checks in their order,
 * duplicates and conflicts, a full store, and no secret in any log line.
 */
import t from 'tap'
import { createHmac } from 'node:crypto'
import { connect } from 'node:net'
import { assertProxyError } from '../helpers/proxy-error.js'
import { eventually } from '../helpers/eventually.js'
import { rawRequest } from '../helpers/raw-http.js'
import { readResponse } from '../security/raw-client.js'
import { PATH_TOKEN, PREVIOUS_PATH_TOKEN, SIGNING_SECRET, VERIFY_SECRET, post, startInboxAndApp, webhooksCommand } from './inbox-harness.js'

t.test('an event is answered 200 with its id only once stored: body byte for byte, provider headers kept, secrets and hop-by-hop ones not', async (t) => {
  const { inbox } = await startInboxAndApp(t, { PROXY_WEBHOOK_VERIFY_SECRET: VERIFY_SECRET })
  // Invalid UTF-8 and a NUL: the body is bytes, not text.
  const body = Buffer.concat([Buffer.from('{"id":"evt_1","amount":"10.00"}'), Buffer.from([0xff, 0x00, 0xfe])])
  const res = await post(`${inbox.intakeUrl}?ignored=query`, body, {
    'x-webhook-signature': VERIFY_SECRET, 'content-type': 'application/octet-stream', 'x-provider-trace': 'abc', cookie: 'a=b', authorization: 'Bearer nope',
    'x-forwarded-proto': 'https', 'webhook-id': 'provider-own-id',
  })
  t.equal(res.status, 200)
  t.equal(res.json['received'], true)
  const id = res.json['id']
  t.match(id, /^msg_[A-Za-z0-9_-]{22}$/)
  const shown = await inbox.store.show(String(id))
  if (shown === null) throw new Error('the event answered 200 is not in the store')
  t.ok(shown.event.body.equals(body), 'stored byte for byte')
  const headers = Object.fromEntries(shown.event.headers)
  t.equal(headers['content-type'], 'application/octet-stream')
  t.equal(headers['x-provider-trace'], 'abc')
  t.equal(headers['x-provider-webhook-id'], 'provider-own-id', 'a provider webhook-* header is renamed')
  for (const name of ['x-webhook-signature', 'cookie', 'authorization', 'x-forwarded-proto', 'host', 'content-length', 'connection', 'webhook-id']) t.notOk(name in headers, `${name} is not stored`)
  t.equal(shown.event.source, '127.0.0.1')
})

t.test('any Content-Type is taken, one that is not a media type too: stored and delivered as sent', async (t) => {
  const { inbox, app } = await startInboxAndApp(t, { PROXY_WEBHOOK_RETRY_SCHEDULE: '50ms' })
  app.answer((_req, res) => { res.end('ok') })
  for (const contentType of ['garbage', ';', '', 'text/plain; charset=utf-8', 'application/json']) {
    const body = JSON.stringify({ id: `evt_${contentType}`, n: 1 })
    const res = await post(inbox.intakeUrl, body, { 'content-type': contentType })
    t.equal(res.status, 200, `${JSON.stringify(contentType)}: 200`)
    const shown = await inbox.store.show(String(res.json['id']))
    t.equal(Object.fromEntries(shown?.event.headers ?? [])['content-type'], contentType, `${JSON.stringify(contentType)}: stored as sent`)
    await eventually(() => app.deliveries.some((d) => d.body.toString() === body), { what: `${JSON.stringify(contentType)} delivered` })
    t.equal(app.deliveries.find((d) => d.body.toString() === body)?.headers['content-type'], contentType, `${JSON.stringify(contentType)}: delivered as sent`)
  }
})

t.test('the provider\'s signature header is never stored, shown or delivered, verified or not; a sender\'s own webhook-conflict and x-provider-webhook-* are dropped', async (t) => {
  for (const [label, overrides, header] of [
    ['no verification configured', {}, 'X-Webhook-Signature'],
    ['no verification, another header name', { PROXY_WEBHOOK_VERIFY_HEADER: 'X-Signature' }, 'X-Signature'],
    ['verification configured', { PROXY_WEBHOOK_VERIFY_SECRET: VERIFY_SECRET }, 'X-Webhook-Signature'],
  ] as const) {
    const { inbox, app } = await startInboxAndApp(t, overrides)
    const res = await post(inbox.intakeUrl, '{"id":"evt_1"}', {
      [header]: VERIFY_SECRET, 'webhook-id': 'provider-own-id', 'webhook-conflict': 'msg_forged', 'x-provider-webhook-id': 'forged-id', 'x-provider-webhook-timestamp': '1', 'x-provider-trace': 't1',
    })
    t.equal(res.status, 200, `${label}: stored`)
    await eventually(() => app.deliveries.length === 1, { what: `${label}: the delivery` })
    const delivered = app.deliveries[0]?.headers ?? {}
    t.equal(delivered[header.toLowerCase()], undefined, `${label}: the signature header is not delivered`)
    t.equal(delivered['webhook-conflict'], undefined, `${label}: a sender's webhook-conflict is not delivered`)
    t.equal(delivered['x-provider-webhook-id'], 'provider-own-id', `${label}: x-provider-webhook-id carries the provider's webhook-id, not the sender's own header`)
    t.equal(delivered['x-provider-webhook-timestamp'], undefined, `${label}: a sender's x-provider-webhook-timestamp is not delivered`)
    t.equal(delivered['x-provider-trace'], 't1', `${label}: the provider's other headers are`)
    const shown = await webhooksCommand(inbox, ['show', String(res.json['id'])])
    t.equal(shown.code, 0)
    t.notOk(shown.out.includes(VERIFY_SECRET), `${label}: webhooks show does not print the secret`)
    t.notOk(shown.out.includes('forged'), `${label}: nor the forged headers`)
    t.match(shown.out, '"x-provider-trace"')
  }
})

t.test('the listener serves the intake path and /healthz only: every other path and spelling is 404 ROUTE_NOT_FOUND, nothing stored', async (t) => {
  const { inbox } = await startInboxAndApp(t, { PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS: PREVIOUS_PATH_TOKEN })
  t.equal((await fetch(`${inbox.url}/healthz`)).status, 200)
  const refused = [
    '/metrics', '/readyz', '/fiat/v1/collections', '/sandbox/fiat/auth/generate-bearer-token', '/production/crypto/x', '/webhooks', '/webhooks/',
    `/webhooks/${PATH_TOKEN}/`, `/webhooks/${PATH_TOKEN.toUpperCase()}`, `//webhooks/${PATH_TOKEN}`, `/WEBHOOKS/${PATH_TOKEN}`, `/webhooks/${PATH_TOKEN}x`,
    `/webhooks/${PATH_TOKEN.slice(0, -1)}`, `/webhooks/%77${PATH_TOKEN.slice(1)}`, `/webhooks/${PATH_TOKEN}/../${PATH_TOKEN}`, `/webhooks/${PATH_TOKEN}%00`,
    `/x/../webhooks/${PATH_TOKEN}`, `/webhooks/${PATH_TOKEN};a`,
  ]
  for (const path of refused) {
    const res = await rawRequest(inbox.port, `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`)
    await assertProxyError(t, res, 404, 'ROUTE_NOT_FOUND', `POST ${path}`)
    t.notOk(res.body.includes(PATH_TOKEN), `${path}: the token is not echoed`)
  }
  for (const path of ['/metrics', '/readyz']) await assertProxyError(t, await fetch(`${inbox.url}${path}`), 404, 'ROUTE_NOT_FOUND', `GET ${path}`)
  t.equal((await inbox.store.list({})).length, 0, 'nothing stored')
  t.equal((await post(`${inbox.url}/webhooks/${PREVIOUS_PATH_TOKEN}`, '{"a":1}')).status, 200, 'the previous token is accepted during a change of registration')
  const refusals = inbox.logs.find('webhook refused')
  t.ok(refusals.length > 0)
  t.ok(refusals.every((r) => r['path'] === '/webhooks/<redacted>' && r['level'] === 40), 'refusals are logged at warn with the path redacted')
})

t.test('checks run in order: token (404), source (403), method (405), size (413), signature (401)', async (t) => {
  const { inbox } = await startInboxAndApp(t, {
    PROXY_WEBHOOK_VERIFY_SECRET: VERIFY_SECRET, PROXY_WEBHOOK_BODY_LIMIT_BYTES: '1024', PROXY_WEBHOOK_ALLOWED_SOURCES: '203.0.113.0/24', PROXY_WEBHOOK_TRUSTED_PROXIES: '127.0.0.1',
  })
  const fromProvider = { 'x-forwarded-for': '203.0.113.7' }
  const big = 'x'.repeat(2000)
  await assertProxyError(t, await post(`${inbox.url}/webhooks/wrong_token_wrong_token_1`, big, { 'x-forwarded-for': '198.51.100.1' }), 404, 'ROUTE_NOT_FOUND', 'wrong token from a refused source')
  const fetchRaw = (method: string, headers: Record<string, string>, body?: string): Promise<Response> => fetch(inbox.intakeUrl, { method, headers, body })
  await assertProxyError(t, await fetchRaw('GET', { 'x-forwarded-for': '198.51.100.1' }), 403, 'WEBHOOK_SOURCE_NOT_ALLOWED', 'GET from a refused source')
  await assertProxyError(t, await fetchRaw('PUT', fromProvider, big), 405, 'METHOD_NOT_ALLOWED', 'PUT of a large body')
  await assertProxyError(t, await post(inbox.intakeUrl, big, fromProvider), 413, 'BODY_TOO_LARGE', 'an unsigned body over the limit')
  await assertProxyError(t, await post(inbox.intakeUrl, '{}', fromProvider), 401, 'WEBHOOK_SIGNATURE_INVALID', 'no signature')
  t.equal((await post(inbox.intakeUrl, '{}', { ...fromProvider, 'x-webhook-signature': VERIFY_SECRET })).status, 200, 'all checks pass')
  t.equal((await inbox.store.list({})).length, 1, 'only the accepted event is stored')
})

t.test('X-Forwarded-For counts only from a trusted proxy, and then its right-most untrusted address', async (t) => {
  const trusted = await startInboxAndApp(t, { PROXY_WEBHOOK_ALLOWED_SOURCES: '203.0.113.0/24', PROXY_WEBHOOK_TRUSTED_PROXIES: '127.0.0.1,10.0.0.0/8' })
  t.equal((await post(trusted.inbox.intakeUrl, '{"a":1}', { 'x-forwarded-for': '198.51.100.1, 203.0.113.5, 10.1.2.3' })).status, 200, 'the right-most untrusted hop is the provider')
  await assertProxyError(t, await post(trusted.inbox.intakeUrl, '{"a":2}', { 'x-forwarded-for': '203.0.113.5, 198.51.100.9' }), 403, 'WEBHOOK_SOURCE_NOT_ALLOWED', 'a forged left-most entry')
  const untrusted = await startInboxAndApp(t, { PROXY_WEBHOOK_ALLOWED_SOURCES: '203.0.113.0/24' })
  await assertProxyError(t, await post(untrusted.inbox.intakeUrl, '{"a":3}', { 'x-forwarded-for': '203.0.113.5' }), 403, 'WEBHOOK_SOURCE_NOT_ALLOWED', 'X-Forwarded-For from a peer that is not a trusted proxy')
  t.equal(trusted.inbox.logs.find('webhook refused')[0]?.['source'], '198.51.100.9', 'the refusal names the source address')
})

t.test('a body over the limit is 413 with and without Content-Length, read to the answer, nothing stored', async (t) => {
  const { inbox } = await startInboxAndApp(t, { PROXY_WEBHOOK_BODY_LIMIT_BYTES: '1024' })
  const body = 'y'.repeat(50_000)
  const declared = await rawRequest(inbox.port, `POST /webhooks/${PATH_TOKEN} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
  await assertProxyError(t, declared, 413, 'BODY_TOO_LARGE', 'with Content-Length')
  t.equal(declared.headers['connection'], 'close')
  const chunk = body.slice(0, 4096)
  const chunks = Array.from({ length: 12 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('')
  const chunked = await rawRequest(inbox.port, `POST /webhooks/${PATH_TOKEN} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`)
  await assertProxyError(t, chunked, 413, 'BODY_TOO_LARGE', 'chunked')
  t.equal((await inbox.store.list({})).length, 0)
})

t.test('Expect: 100-continue: a declared length over the limit gets 413 and never 100 Continue; within it, 100 Continue and the event is stored', async (t) => {
  const { inbox } = await startInboxAndApp(t, { PROXY_WEBHOOK_BODY_LIMIT_BYTES: '1024' })
  const over = connect({ port: inbox.port, host: '127.0.0.1' })
  t.teardown(() => over.destroy())
  over.write(`POST /webhooks/${PATH_TOKEN} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 2000\r\n\r\n`)
  const refused = await readResponse(over)
  t.notMatch(refused.raw, /^HTTP\/1\.1 100/, 'no 100 Continue for a body over the limit')
  await assertProxyError(t, refused, 413, 'BODY_TOO_LARGE', 'over the limit by its declared length')
  t.equal(refused.headers['connection'], 'close', 'with the lingering close')

  const wrongToken = connect({ port: inbox.port, host: '127.0.0.1' })
  t.teardown(() => wrongToken.destroy())
  wrongToken.write(`POST /webhooks/${PATH_TOKEN}x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n`)
  const notFound = await readResponse(wrongToken)
  t.notMatch(notFound.raw, /^HTTP\/1\.1 100/, 'no 100 Continue before a refusal by the route\'s own checks')
  await assertProxyError(t, notFound, 404, 'ROUTE_NOT_FOUND', 'a wrong token')

  const within = connect({ port: inbox.port, host: '127.0.0.1' })
  t.teardown(() => within.destroy())
  const body = '{"id":"evt_continue"}'
  within.write(`POST /webhooks/${PATH_TOKEN} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`)
  const interim = await new Promise<string>((resolve) => within.once('data', (chunk: Buffer) => { resolve(chunk.toString('latin1')) }))
  t.match(interim, /^HTTP\/1\.1 100 Continue\r\n/, '100 Continue within the limit')
  within.write(body)
  const answer = await readResponse(within)
  t.equal(answer.status, 200, 'stored')
  const [stored] = await inbox.store.list({})
  t.equal((await inbox.store.show(stored?.id ?? ''))?.event.body.toString(), body, 'the body arrived whole')
})

t.test('hmac scheme: a right signature passes; a right signature over another body, a wrong or missing one is 401', async (t) => {
  const { inbox } = await startInboxAndApp(t, {
    PROXY_WEBHOOK_VERIFY_SECRET: VERIFY_SECRET, PROXY_WEBHOOK_VERIFY_SCHEME: 'hmac', PROXY_WEBHOOK_VERIFY_HEADER: 'x-signature', PROXY_WEBHOOK_VERIFY_PREFIX: 'sha256=',
  })
  const sign = (body: string): string => `sha256=${createHmac('sha256', VERIFY_SECRET).update(body).digest('hex')}`
  t.equal((await post(inbox.intakeUrl, '{"id":1}', { 'x-signature': sign('{"id":1}') })).status, 200)
  await assertProxyError(t, await post(inbox.intakeUrl, '{"id":2}', { 'x-signature': sign('{"id":1}') }), 401, 'WEBHOOK_SIGNATURE_INVALID', 'a right signature over another body')
  await assertProxyError(t, await post(inbox.intakeUrl, '{"id":2}', { 'x-signature': 'sha256=00' }), 401, 'WEBHOOK_SIGNATURE_INVALID', 'a wrong one')
  await assertProxyError(t, await post(inbox.intakeUrl, '{"id":2}'), 401, 'WEBHOOK_SIGNATURE_INVALID', 'none')
  const [listed] = await inbox.store.list({})
  const stored = await inbox.store.show(listed?.id ?? '')
  t.ok(stored?.event.headers.some(([name]) => name === 'content-type'), 'the headers were stored')
  t.notOk(stored?.event.headers.some(([name]) => name === 'x-signature'), 'the verification header is not stored')
  t.equal((await inbox.store.list({})).length, 1)
})

t.test('the same event 50 times at once is stored once and delivered once; 50 answers of 200 with one id', async (t) => {
  for (const [label, overrides, body] of [
    ['by event id', { PROXY_WEBHOOK_EVENT_ID_POINTER: '/id' }, (i: number) => `{"id":"evt_same","n":${i % 1}}`],
    ['by body hash', {}, () => '{"no":"id"}'],
  ] as const) {
    const { inbox, app } = await startInboxAndApp(t, overrides)
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => post(inbox.intakeUrl, body(i))))
    t.ok(answers.every((a) => a.status === 200), `${label}: 50 answers of 200`)
    t.equal(new Set(answers.map((a) => a.json['id'])).size, 1, `${label}: one id`)
    t.equal(answers.filter((a) => a.json['duplicate'] === true).length, 49, `${label}: 49 marked duplicate`)
    await eventually(() => app.deliveries.length === 1, { what: 'the delivery' })
    // Once recorded delivered, an event is claimed by no later look: nothing else is on its way, nor will be.
    await eventually(async () => (await inbox.store.list({})).every((e) => e.status === 'delivered'), { what: `${label}: the delivery recorded` })
    t.equal(app.deliveries.length, 1, `${label}: delivered once`)
    t.equal((await inbox.store.list({})).length, 1, `${label}: stored once`)
  }
})

t.test('a known event id with another body is a conflict: stored, delivered with webhook-conflict, logged at warn', async (t) => {
  const { inbox, app } = await startInboxAndApp(t, { PROXY_WEBHOOK_EVENT_ID_HEADER: 'X-Event-Id' })
  const first = await post(inbox.intakeUrl, '{"status":"paid"}', { 'x-event-id': 'evt_9' })
  const forged = await post(inbox.intakeUrl, '{"status":"failed"}', { 'x-event-id': 'evt_9' })
  t.equal(forged.status, 200)
  t.not(forged.json['id'], first.json['id'], 'a new event')
  t.notOk(forged.json['duplicate'])
  const again = await post(inbox.intakeUrl, '{"status":"failed"}', { 'x-event-id': 'evt_9' })
  t.equal(again.json['id'], forged.json['id'], 'the conflicting event resent is a duplicate of itself')
  await eventually(() => app.deliveries.length === 2, { what: 'both deliveries' })
  const conflict = app.deliveries.find((d) => d.body.toString() === '{"status":"failed"}')
  t.equal(conflict?.headers['webhook-conflict'], first.json['id'])
  t.equal(app.deliveries.find((d) => d.body.toString() === '{"status":"paid"}')?.headers['webhook-conflict'], undefined)
  const warned = inbox.logs.find('webhook conflict: same event id, different body')
  t.equal(warned.length, 1)
  t.equal(warned[0]?.['level'], 40)
})

t.test('past the store bound new events get 503 WEBHOOK_STORE_UNAVAILABLE with Retry-After; nothing stored is dropped', async (t) => {
  const { inbox, app } = await startInboxAndApp(t, { PROXY_WEBHOOK_STORE_MAX_EVENTS: '2' })
  app.answer((_req, res) => { res.statusCode = 500; res.end() })
  t.equal((await post(inbox.intakeUrl, '{"n":1}')).status, 200)
  t.equal((await post(inbox.intakeUrl, '{"n":2}')).status, 200)
  const full = await post(inbox.intakeUrl, '{"n":3}')
  await assertProxyError(t, full, 503, 'WEBHOOK_STORE_UNAVAILABLE', 'past the bound')
  t.ok(Number(full.headers.get('retry-after')) > 0, 'Retry-After')
  t.equal((await post(inbox.intakeUrl, '{"n":1}')).json['duplicate'], true, 'a duplicate of a stored event is still answered 200')
  t.equal((await inbox.store.list({})).length, 2)
})

t.test('no path token, provider secret or signing secret in any log line', async (t) => {
  const { inbox, app } = await startInboxAndApp(t, { PROXY_WEBHOOK_VERIFY_SECRET: VERIFY_SECRET, PROXY_WEBHOOK_PATH_TOKEN_PREVIOUS: PREVIOUS_PATH_TOKEN })
  await post(inbox.intakeUrl, '{"a":1}', { 'x-webhook-signature': VERIFY_SECRET })
  await post(inbox.intakeUrl, '{"a":2}', { 'x-webhook-signature': 'wrong' })
  await post(`${inbox.url}/webhooks/${PATH_TOKEN}x`, '{"a":3}', { 'x-webhook-signature': VERIFY_SECRET })
  await post(`${inbox.url}/webhooks/${PREVIOUS_PATH_TOKEN}`, '{"a":4}', { 'x-webhook-signature': VERIFY_SECRET })
  await eventually(() => app.deliveries.length === 2, { what: 'two deliveries' })
  await eventually(() => inbox.logs.find('webhook delivered').length === 2, { what: 'two delivered lines' })
  const text = inbox.logs.lines.join('\n')
  t.ok(inbox.logs.lines.length > 5, `${inbox.logs.lines.length} lines scanned`)
  for (const secret of [PATH_TOKEN, PREVIOUS_PATH_TOKEN, VERIFY_SECRET, SIGNING_SECRET, SIGNING_SECRET.slice(6)]) t.notOk(text.includes(secret), 'a secret is absent from the logs')
})

t.test('a sender too slow with its headers or its body gets 408 REQUEST_TIMEOUT in the contract shape; nothing stored', async (t) => {
  const { inbox } = await startInboxAndApp(t, {}, { timeouts: { headersMs: 300, requestMs: 600 } })
  const slowHeaders = await rawRequest(inbox.port, `POST /webhooks/${PATH_TOKEN} HTTP/1.1\r\nHost: x\r\n`)
  await assertProxyError(t, slowHeaders, 408, 'REQUEST_TIMEOUT', 'headers never finished')
  const slowBody = await rawRequest(inbox.port, `POST /webhooks/${PATH_TOKEN} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`)
  await assertProxyError(t, slowBody, 408, 'REQUEST_TIMEOUT', 'a body that never finished')
  t.equal((await inbox.store.list({})).length, 0)
})
