/**
 * What a person does on the console (SPEC §14), over HTTP against a real proxy, inbox and fake
 * provider: a decision is the same as the CLI's and the HTTP API's (decidedBy the email,
 * decidedByCaller `console`) and is acted on within 2 s; lists are paged; a record whose seals do
 * not verify is shown rejected, never pending; failed events are replayed; the payments page exists
 * only with the payments capability; no page shows a key, a token or a secret.
 */
import Database from 'better-sqlite3'
import t from 'tap'
import { createSqliteApprovalStore } from '../../src/approvals/sqlite-approval-store.js'
import type { ConsolePayment, ConsolePayments } from '../../src/console/console-deps.js'
import { issueSigninLink } from '../../src/console/signin-secrets.js'
import { eventually } from '../helpers/eventually.js'
import { AGENT_KEY, APPROVER_KEY, pay, payouts, SEALING_SECRET, SIGNING_SECRET } from '../approvals/approvals-harness.js'
import { post, PATH_TOKEN, SIGNING_SECRET as INBOX_SIGNING_SECRET } from '../webhooks/inbox-harness.js'
import { APPROVER, ConsoleClient, csrfOf, hold, READER, startConsoleRig } from './console-rig.js'

t.test('approved on the console: sent once within 2 s, decidedBy the email and decidedByCaller console, as the HTTP API shows it', async (t) => {
  const rig = await startConsoleRig(t)
  const id = await hold(rig, 250, 'ref-approve', { recipient: '+254700000001' })
  const client = new ConsoleClient(rig.url)
  await client.signIn(rig.signins, APPROVER)
  const review = await client.post(`/approvals/${id}/review`, { _csrf: csrfOf((await client.get('/approvals')).text), decision: 'approve', reason: 'invoice 42' })
  t.match(review.text, /Approve this payment\?/)
  t.match(review.text, /Yes, approve 250 KES/)
  t.same(payouts(rig.provider), [], 'the review step decides nothing')
  const decidedAt = performance.now()
  t.equal((await client.post(`/approvals/${id}/decide`, { _csrf: csrfOf(review.text), decision: 'approve', reason: 'invoice 42' })).status, 303)
  await eventually(() => payouts(rig.provider).length === 1, { what: 'the approved payout at the provider', timeoutMs: 2_000 })
  t.ok(performance.now() - decidedAt < 2_000, 'acted on within 2 s')
  t.same(JSON.parse(payouts(rig.provider)[0]?.body ?? '{}'), { amount: 250, currency: 'KES', externalReference: 'ref-approve', recipient: '+254700000001' })
  const api = await fetch(`${rig.proxy.url}/approvals/${id}`, { headers: { authorization: `Bearer ${APPROVER_KEY}` } })
  t.match((await api.json() as { approval: unknown }).approval, { status: 'approved', decidedBy: APPROVER, decidedByCaller: 'console', reason: 'invoice 42' })
  await eventually(async () => (await client.get(`/approvals/${id}`)).text.includes('yes, answered'), { what: 'the page showing it sent' })
  const again = await client.post(`/approvals/${id}/decide`, { _csrf: csrfOf((await client.get(`/approvals/${id}`)).text), decision: 'reject' })
  t.equal(again.status, 409, 'a second decision is shown as already decided')
  t.equal(payouts(rig.provider).length, 1, 'sent once')
  t.ok(rig.logs.find('approval approved').some((e) => e['decidedBy'] === APPROVER && e['decidedByCaller'] === 'console'), 'the decision logged at info with the email')
})

t.test('a held request\'s query is shown with its path: it is sent with it', async (t) => {
  const rig = await startConsoleRig(t)
  const res = await fetch(`${rig.proxy.url}/sandbox/fiat/payouts?channel=mpesa&note=a%20b`, {
    method: 'POST', headers: { authorization: `Bearer ${AGENT_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 250, currency: 'KES', externalReference: 'ref-query' }),
  })
  t.equal(res.status, 202)
  const { approval } = await res.json() as { approval: { id: string } }
  const client = new ConsoleClient(rig.url)
  await client.signIn(rig.signins, APPROVER)
  t.match((await client.get('/approvals')).text, /POST \/sandbox\/fiat\/payouts\?channel=mpesa&amp;note=a%20b/, 'on the list')
  t.match((await client.get(`/approvals/${approval.id}`)).text, /POST \/sandbox\/fiat\/payouts\?channel=mpesa&amp;note=a%20b/, 'on its page')
})

t.test('rejected on the console with a reason: never sent, the agent\'s retry gets 403 APPROVAL_REJECTED with the reason', async (t) => {
  const rig = await startConsoleRig(t)
  const id = await hold(rig, 300, 'ref-reject')
  const client = new ConsoleClient(rig.url)
  await client.signIn(rig.signins, APPROVER)
  const review = await client.post(`/approvals/${id}/review`, { _csrf: csrfOf((await client.get('/approvals')).text), decision: 'reject', reason: 'unknown recipient' })
  t.equal((await client.post(`/approvals/${id}/decide`, { _csrf: csrfOf(review.text), decision: 'reject', reason: 'unknown recipient' })).status, 303)
  const retry = await pay(rig.proxy, { amount: 300, currency: 'KES', externalReference: 'ref-reject' }, AGENT_KEY)
  t.equal(retry.status, 403)
  t.match(await retry.json(), { error: { code: 'APPROVAL_REJECTED', message: /unknown recipient/ } })
  const decided = await client.get('/approvals/decided')
  t.match(decided.text, /Decided approvals <span class="count">\(1\)<\/span>/)
  t.match(decided.text, /rejected/)
  t.match(decided.text, /Reason: unknown recipient/)
  t.match((await client.get('/approvals')).text, /Nothing waits for a decision/)
  t.same(payouts(rig.provider), [])
})

t.test('the pending list is paged, oldest first, with the total', async (t) => {
  const rig = await startConsoleRig(t)
  // One held through the proxy (the rig's day limit admits no 27), 26 more stored beside it, as
  // another process would: the page counts and orders records, whatever their seals say.
  const first = await hold(rig, 101, 'ref-page-0')
  const beside = await createSqliteApprovalStore(rig.storePath)
  t.teardown(() => beside.close())
  const record = await beside.get(first)
  if (record === null) throw new Error('not held')
  for (let i = 1; i < 27; i++) await beside.create({ ...record, id: `apr_page${String(i).padStart(2, '0')}`, key: `k-page-${i}`, createdAtMs: record.createdAtMs + i })
  const client = new ConsoleClient(rig.url)
  await client.signIn(rig.signins, READER)
  const one = await client.get('/approvals')
  t.match(one.text, /Pending approvals <span class="count">\(27\)<\/span>/)
  t.match(one.text, /Page 1 of 2/)
  t.equal(one.text.match(/<article /g)?.length, 25)
  t.ok(one.text.indexOf(first) < one.text.indexOf('apr_page01'), 'oldest first')
  const two = await client.get('/approvals?page=2')
  t.equal(two.text.match(/<article /g)?.length, 2)
  t.match(two.text, /rel="prev"/)
  t.equal((await client.get('/approvals?page=abc')).status, 200, 'a page number that is none is the first page')
})

t.test('a record whose seals do not verify is shown rejected, never pending, and cannot be decided', async (t) => {
  const rig = await startConsoleRig(t)
  const id = await hold(rig, 250, 'ref-forged')
  const db = new Database(rig.storePath)
  const row = db.prepare('SELECT record FROM approvals WHERE id = ?').get(id) as { record: string }
  db.prepare('UPDATE approvals SET record = ? WHERE id = ?').run(JSON.stringify({ ...JSON.parse(row.record) as object, amount: '5' }), id)
  db.close()
  const client = new ConsoleClient(rig.url)
  await client.signIn(rig.signins, APPROVER)
  const page = await client.get(`/approvals/${id}`)
  t.match(page.text, /<span class="badge">rejected<\/span>/)
  t.match(page.text, /record failed verification/)
  t.notMatch(page.text, /\/review"/, 'no decision form')
  const list = await client.get('/approvals')
  t.notMatch(list.text, /badge">pending/, 'not pending in the list either')
  const decided = await client.post(`/approvals/${id}/decide`, { _csrf: csrfOf(list.text), decision: 'approve' })
  t.equal(decided.status, 409)
  t.same(payouts(rig.provider), [])
})

t.test('a failed webhook event is listed with its attempts and replayed from the console, then delivered', async (t) => {
  const rig = await startConsoleRig(t, { inbox: true })
  const { inbox, app } = rig
  if (inbox === null || app === null) throw new Error('no inbox')
  app.answer((_req, res) => { res.statusCode = 500; res.end() })
  const stored = await post(`${inbox.url}/webhooks/${PATH_TOKEN}`, '{"data":{"status":"successful"}}')
  const eventId = String(stored.json['id'])
  await eventually(async () => (await inbox.store.show(eventId))?.event.status === 'failed', { what: 'the event failed after its attempts' })
  const client = new ConsoleClient(rig.url)
  await client.signIn(rig.signins, APPROVER)
  const events = await client.get('/events')
  t.match(events.text, new RegExp(`href="/events/${eventId}"`))
  const detail = await client.get(`/events/${eventId}`)
  t.match(detail.text, /Attempts since it was stored or last replayed \(2\)/)
  t.match(detail.text, /<td>500<\/td>/)
  app.answer((_req, res) => { res.end('ok') })
  const before = app.deliveries.length
  t.equal((await client.post(`/events/${eventId}/replay`, { _csrf: csrfOf(detail.text) })).status, 303)
  await eventually(async () => (await inbox.store.show(eventId))?.event.status === 'delivered', { what: 'the replayed event delivered', timeoutMs: 2_000 })
  t.equal(app.deliveries.length, before + 1)
  t.equal(app.deliveries.at(-1)?.headers['webhook-id'], eventId, 'the same webhook-id')
  const reader = new ConsoleClient(rig.url)
  await reader.signIn(rig.signins, READER)
  const readOnly = await reader.get(`/events/${eventId}`)
  t.notMatch(readOnly.text, /\/replay"/)
  t.equal((await reader.post(`/events/${eventId}/replay`, { _csrf: csrfOf(readOnly.text) })).status, 403, 'a reader cannot replay')
})

t.test('the payments page and recheck exist only when the payments capability is handed in', async (t) => {
  const without = await startConsoleRig(t)
  const client = new ConsoleClient(without.url)
  await client.signIn(without.signins, APPROVER)
  t.equal((await client.get('/payments')).status, 404)
  t.notMatch((await client.get('/approvals')).text, /href="\/payments"/)

  const payment: ConsolePayment = {
    id: 'pay_1', state: 'stale', providerStatus: 'PENDING', caller: 'payout-agent', environment: 'sandbox', interface: 'fiat', method: 'POST', path: '/payouts',
    externalReference: '<ref>', transactionId: 'tx-1', amount: '1500', currency: 'KES', createdAt: 1_700_000_000, lookups: { count: 8, lastAt: 1_700_086_400, lastOutcome: 'pending', nextAt: null },
  }
  const asked: Array<{ states: readonly string[], offset: number, limit: number }> = []
  const rechecked: string[] = []
  const payments: ConsolePayments = {
    list: async (query) => { asked.push(query); return { payments: [payment], total: 1 } },
    browse: async () => ({ payments: [payment], more: false }),
    find: async () => [],
    get: async () => null,
    recheck: async (id) => { rechecked.push(id); return id === 'pay_1' ? payment : null },
  }
  const rig = await startConsoleRig(t, { payments })
  const person = new ConsoleClient(rig.url)
  await person.signIn(rig.signins, APPROVER)
  const page = await person.get('/payments')
  t.equal(page.status, 200)
  t.match(page.text, /1,500 KES/)
  t.match(page.text, /&lt;ref&gt;/)
  t.same(asked, [{ states: ['unverified', 'stale', 'unknown'], offset: 0, limit: 25 }])
  t.equal((await person.post('/payments/pay_1/recheck', { _csrf: csrfOf(page.text) })).status, 303)
  t.equal((await person.post('/payments/pay_2/recheck', { _csrf: csrfOf(page.text) })).status, 404)
  t.same(rechecked, ['pay_1', 'pay_2'])
})

t.test('a search by reference, payment id or transaction id opens the payment\'s page; several matches are a list, none a 404', async (t) => {
  const base: ConsolePayment = {
    id: 'pay_ord1003', state: 'succeeded', providerStatus: 'successful', caller: 'payout-agent', environment: 'production', interface: 'fiat', method: 'POST', path: '/v1/payouts',
    externalReference: 'ord-1003', transactionId: 'tx-1003', amount: '1500', currency: 'KES', createdAt: 1_700_000_000, settledAt: 1_700_000_060, settledBy: 'lookup', confirmed: true,
    events: [{ id: 'msg_e1', status: '<b>successful</b>', receivedAt: 1_700_000_050, disputed: false }],
    lookups: { count: 2, lastAt: 1_700_000_060, lastOutcome: 'final', nextAt: null },
  }
  const other: ConsolePayment = { ...base, id: 'pay_other', externalReference: 'tx-1003', state: 'pending', transactionId: null, settledAt: null, confirmed: false, events: [] }
  const searched: string[] = []
  const browsed: Array<{ state: string | null, offset: number }> = []
  const payments: ConsolePayments = {
    list: async () => ({ payments: [], total: 0 }),
    browse: async (query) => { browsed.push({ state: query.state, offset: query.offset }); return { payments: [base], more: true } },
    find: async (text) => {
      searched.push(text)
      if (text === 'tx-1003') return [base, other]
      return ['ord-1003', 'pay_ord1003'].includes(text) ? [base] : []
    },
    get: async (id) => [base, other].find((p) => p.id === id) ?? null,
    recheck: async (id) => [base, other].find((p) => p.id === id) ?? null,
  }
  const rig = await startConsoleRig(t, { payments })
  const person = new ConsoleClient(rig.url)
  await person.signIn(rig.signins, APPROVER)
  const start = await person.get('/approvals')
  t.match(start.text, /<form class="search" role="search" method="get" action="\/payments\/find">/, 'the search box on every page')
  for (const q of ['ord-1003', ' pay_ord1003 ']) {
    const found = await person.get(`/payments/find?q=${encodeURIComponent(q)}`)
    t.equal(found.status, 303, q)
    t.equal(found.headers.get('location'), '/payments/pay_ord1003', `${q} opens its page`)
  }
  const several = await person.get('/payments/find?q=tx-1003')
  t.equal(several.status, 200)
  t.match(several.text, '2 payments match')
  t.match(several.text, 'href="/payments/pay_other"')
  const none = await person.get('/payments/find?q=%3Cscript%3Eord-9%3C%2Fscript%3E')
  t.equal(none.status, 404)
  t.match(none.text, '&lt;script&gt;ord-9&lt;/script&gt;', 'what was typed, escaped')
  t.same(searched, ['ord-1003', 'pay_ord1003', 'tx-1003', '<script>ord-9</script>'])

  const page = await person.get('/payments/pay_ord1003')
  t.equal(page.status, 200)
  for (const shown of ['1,500', 'succeeded', 'confirmed by the provider', 'env-production', 'ord-1003', 'tx-1003', 'by a look-up', 'href="/events/msg_e1"', '&lt;b&gt;successful&lt;/b&gt;']) {
    t.match(page.text, shown, `the payment's page shows ${shown}`)
  }
  t.notMatch(page.text, 'action="/payments/pay_ord1003/recheck"', 'no recheck of a final payment')
  const pending = await person.get('/payments/pay_other')
  t.match(pending.text, 'waiting for the provider')
  t.match(pending.text, 'action="/payments/pay_other/recheck"')
  t.equal((await person.post('/payments/pay_other/recheck', { _csrf: csrfOf(pending.text) })).headers.get('location'), '/payments/pay_other')
  t.equal((await person.get('/payments/pay_none')).status, 404)
  t.equal((await person.get('/payments/not-an-id')).status, 404)

  const all = await person.get('/payments?state=all&page=2')
  t.match(all.text, 'Every payment')
  t.match(all.text, 'href="/payments?state=all&amp;page=3"', 'older ones on the next page')
  t.match((await person.get('/payments?state=failed')).text, 'Payments failed')
  t.same(browsed, [{ state: null, offset: 25 }, { state: 'failed', offset: 0 }])
})

t.test('no page or log line shows a key, a token, a secret or a session cookie; signing out ends the session', async (t) => {
  const rig = await startConsoleRig(t, { inbox: true })
  await hold(rig, 250, 'ref-secrets')
  const link = await issueSigninLink(rig.signins, rig.url, APPROVER, Date.now())
  const secret = link.slice(link.indexOf('#') + 1)
  const client = new ConsoleClient(rig.url)
  await client.post('/signin', { secret })
  const cookie = client.cookie ?? ''
  t.match(cookie, /^console-session=[A-Za-z0-9_-]{43}$/)
  const pages = await Promise.all(['/approvals', '/approvals/decided', '/events', '/status'].map(async (path) => (await client.get(path)).text))
  const tokens = [...rig.proxy.sources.values()].map((s) => s.status()).length
  t.equal(tokens, 2)
  const secrets = [secret, cookie.split('=')[1] ?? '', ...Object.values(rig.proxy.config.environments).flatMap((e) => [e.credentials.apiKey, e.credentials.publicKey]), SIGNING_SECRET, SEALING_SECRET, INBOX_SIGNING_SECRET, PATH_TOKEN, ...rig.provider.issuedTokens]
  for (const value of secrets) {
    t.notOk(pages.some((p) => p.includes(value)), `no page shows ${value.slice(0, 6)}…`)
    t.notOk(rig.logs.lines.some((l) => l.includes(value)), `no log line shows ${value.slice(0, 6)}…`)
  }
  t.match(pages[3], /<span class="badge ok">held<\/span>/, 'the status page says a token is held, not which')
  const set = await client.post('/signout', { _csrf: csrfOf(pages[0] ?? '') })
  t.equal(set.headers.get('location'), '/signin')
  client.cookie = cookie
  t.equal((await client.get('/approvals')).headers.get('location'), '/signin', 'the old cookie signs in no more')
})
