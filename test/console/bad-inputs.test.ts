/**
 * BAD_INPUTS "Console (SPEC §14)", each row over real sockets against a real console in front of
 * a real proxy: a reused, late or query-borne sign-in link; decisions without the token, from
 * another Origin, by GET; a sign-in header from an untrusted peer; hostile values in a held
 * request; a person who is not an approver; two people deciding at once. Each refusal decides
 * nothing (the store says so), and the console goes on serving.
 */
import t from 'tap'
import { systemClock, type Clock } from '../../src/clock.js'
import { issueSigninLink } from '../../src/console/signin-secrets.js'
import { eventually } from '../helpers/eventually.js'
import { payouts } from '../approvals/approvals-harness.js'
import { APPROVER, ConsoleClient, csrfOf, hold, READER, startConsoleRig } from './console-rig.js'

t.test('a sign-in link works once: its second use is refused and logged at warn with the email', async (t) => {
  const rig = await startConsoleRig(t)
  const link = await issueSigninLink(rig.signins, rig.url, APPROVER, Date.now())
  const secret = link.slice(link.indexOf('#') + 1)
  t.match(link, new RegExp(`^${rig.url}/signin#[A-Za-z0-9_-]{43}$`))
  const first = new ConsoleClient(rig.url)
  t.equal((await first.post('/signin', { secret })).status, 303)
  t.equal((await first.get('/approvals')).status, 200, 'signed in')
  const second = new ConsoleClient(rig.url)
  const again = await second.post('/signin', { secret })
  t.equal(again.status, 403)
  t.match(again.text, /used already/)
  t.equal(second.cookie, null, 'no session for the second use')
  t.equal((await second.get('/approvals')).headers.get('location'), '/signin')
  t.ok(rig.logs.records.some((e) => e['level'] === 40 && e['msg'] === 'console sign-in link used again: refused' && e['email'] === APPROVER), 'warn line with the email')
  t.notOk(rig.logs.lines.join('\n').includes(secret), 'the secret is never logged')
})

t.test('a sign-in link older than 10 minutes is refused', async (t) => {
  let nowMs = Date.now()
  const clock: Clock = { ...systemClock, wallMs: () => nowMs }
  const rig = await startConsoleRig(t, { clock })
  const link = await issueSigninLink(rig.signins, rig.url, APPROVER, nowMs)
  nowMs += 10 * 60_000 + 1
  const client = new ConsoleClient(rig.url)
  const late = await client.post('/signin', { secret: link.slice(link.indexOf('#') + 1) })
  t.equal(late.status, 403)
  t.match(late.text, /more than 10 minutes old/)
  t.equal(client.cookie, null)
  const fresh = await issueSigninLink(rig.signins, rig.url, APPROVER, nowMs - 9 * 60_000)
  t.equal((await client.post('/signin', { secret: fresh.slice(fresh.indexOf('#') + 1) })).status, 303, 'one of 9 minutes still signs in')
})

t.test('a secret in the query string instead of the fragment is refused, and that link is spent', async (t) => {
  const rig = await startConsoleRig(t)
  const link = await issueSigninLink(rig.signins, rig.url, APPROVER, Date.now())
  const secret = link.slice(link.indexOf('#') + 1)
  const client = new ConsoleClient(rig.url)
  const inQuery = await client.get(`/signin?secret=${secret}`)
  t.equal(inQuery.status, 400)
  t.match(inQuery.text, /belongs after # in the link/)
  t.equal(client.cookie, null)
  t.equal((await client.post(`/signin?secret=${secret}`, { secret })).status, 400, 'posted with the query as well')
  t.equal((await client.post('/signin', { secret })).status, 403, 'the link cannot sign in afterwards')
  t.ok(rig.logs.records.some((e) => e['level'] === 40 && /query string refused/.test(String(e['msg']))))
  t.notOk(rig.logs.lines.join('\n').includes(secret), 'the secret is never logged')
})

t.test('a decision without the CSRF token, with a wrong one, from another Origin or none, or by GET decides nothing', async (t) => {
  const rig = await startConsoleRig(t)
  const id = await hold(rig, 250, 'ref-csrf')
  const client = new ConsoleClient(rig.url)
  await client.signIn(rig.signins, APPROVER)
  const token = csrfOf((await client.get('/approvals')).text)
  const other = new ConsoleClient(rig.url)
  await other.signIn(rig.signins, APPROVER)
  const othersToken = csrfOf((await other.get('/approvals')).text)
  const form = { decision: 'approve', reason: 'ok' }
  const refusals: Array<[string, Promise<{ status: number, text: string, headers: Headers }>, number]> = [
    ['no token', client.post(`/approvals/${id}/decide`, form), 403],
    ['a wrong token', client.post(`/approvals/${id}/decide`, { ...form, _csrf: `${token}x` }), 403],
    ['another session\'s token', client.post(`/approvals/${id}/decide`, { ...form, _csrf: othersToken }), 403],
    ['the token in a header only', client.post(`/approvals/${id}/decide`, form, { headers: { 'x-csrf-token': 'nope' } }), 403],
    ['another site\'s Origin', client.post(`/approvals/${id}/decide`, { ...form, _csrf: token }, { origin: 'https://evil.example' }), 403],
    ['the console\'s Origin on another port', client.post(`/approvals/${id}/decide`, { ...form, _csrf: token }, { origin: 'http://127.0.0.1:1' }), 403],
    ['no Origin', client.post(`/approvals/${id}/decide`, { ...form, _csrf: token }, { origin: null }), 403],
    ['Origin null', client.post(`/approvals/${id}/decide`, { ...form, _csrf: token }, { origin: 'null' }), 403],
    ['GET', client.get(`/approvals/${id}/decide?decision=approve&_csrf=${token}`), 405],
    ['GET on the review step', client.get(`/approvals/${id}/review`), 405],
  ]
  for (const [what, answer, status] of refusals) {
    const a = await answer
    t.equal(a.status, status, what)
    t.equal(a.headers.get('x-proxy-error'), status === 405 ? 'METHOD_NOT_ALLOWED' : 'CLIENT_NOT_ALLOWED', what)
    if (status === 405) t.equal(a.headers.get('allow'), 'POST', what)
    t.match(a.headers.get('content-type'), /text\/html/, `${what}: a page a person can read`)
  }
  t.equal((await rig.proxy.shared.approvals?.get(id, Date.now()))?.record.status, 'pending', 'nothing decided')
  t.same(payouts(rig.provider), [], 'nothing sent')
  t.ok(rig.logs.records.some((e) => e['level'] === 40 && /Origin is not the console's/.test(String(e['msg']))), 'an Origin refusal at warn')
  t.ok(rig.logs.records.some((e) => e['level'] === 40 && /no valid CSRF token/.test(String(e['msg'])) && e['email'] === APPROVER), 'a token refusal at warn, with the email')
  const decided = await client.post(`/approvals/${id}/decide`, { ...form, _csrf: token })
  t.equal(decided.status, 303, 'the same console still serves, and the right form decides')
})

t.test('the sign-in header from a peer that is not a trusted proxy is ignored; from a trusted one it signs in', async (t) => {
  const untrusted = await startConsoleRig(t, { env: { PROXY_CONSOLE_TRUSTED_PROXIES: '10.0.0.1' } })
  const client = new ConsoleClient(untrusted.url)
  const page = await client.get('/approvals', { 'x-forwarded-email': APPROVER })
  t.equal(page.status, 303)
  t.equal(page.headers.get('location'), '/signin', 'not signed in')
  t.equal(client.cookie, null)
  t.ok(untrusted.logs.records.some((e) => e['level'] === 40 && /not in PROXY_CONSOLE_TRUSTED_PROXIES ignored/.test(String(e['msg']))))

  const trusted = await startConsoleRig(t, { env: { PROXY_CONSOLE_TRUSTED_PROXIES: '127.0.0.1', PROXY_CONSOLE_USER_HEADER: 'x-auth-request-email' } })
  const proxied = new ConsoleClient(trusted.url)
  t.equal((await proxied.get('/approvals', { 'x-forwarded-email': APPROVER })).status, 303, 'another header name than the configured one is no sign-in')
  const signedIn = await proxied.get('/approvals', { 'x-auth-request-email': 'Ann@Example.com' })
  t.equal(signedIn.status, 200)
  t.match(signedIn.text, /ann@example\.com/)
  t.ok(trusted.logs.records.some((e) => e['level'] === 30 && e['msg'] === 'console sign-in' && e['email'] === APPROVER && e['via'] === 'header'))
  const bob = await proxied.get('/approvals', { 'x-auth-request-email': 'bob@example.com' })
  t.match(bob.text, /bob@example\.com \(read-only\)/, 'the proxy\'s person is the person, whatever session the browser held')
  t.equal((await proxied.get('/approvals', { 'x-auth-request-email': 'ann@example.com, bob@example.com' })).status, 303, 'two addresses are no one')
})

t.test('a held request holding <script>, "><img onerror>, and a 10,000-character reference is shown escaped and cut, and can be decided', async (t) => {
  const rig = await startConsoleRig(t)
  const reference = `"><img src=x onerror=alert(1)>${'r'.repeat(10_000 - 30)}`
  const id = await hold(rig, 250, reference, { note: '<script>alert(1)</script>', to: '"><img src=x onerror=alert(2)>' })
  const client = new ConsoleClient(rig.url)
  await client.signIn(rig.signins, APPROVER)
  for (const path of ['/approvals', `/approvals/${id}`]) {
    const page = await client.get(path)
    t.equal(page.status, 200)
    t.notMatch(page.text, /<script>alert|<img src=x/, `${path}: no markup of the caller's reaches the page`)
    t.match(page.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/, `${path}: the body shown as text`)
    t.match(page.text, /&quot;&gt;&lt;img src=x onerror=alert\(1\)&gt;r+…/, `${path}: the reference shown as text, cut`)
    t.match(page.text, /cut: 10000 characters in all/, `${path}: and said to be cut`)
    t.ok(page.text.length < 60_000, `${path}: the 10,000 characters are not all on the page (${page.text.length})`)
    t.match(page.headers.get('content-security-policy'), /script-src 'self'/, 'no inline script could run even if one slipped through')
  }
  const review = await client.post(`/approvals/${id}/review`, { _csrf: csrfOf((await client.get('/approvals')).text), decision: 'reject', reason: '<b>no</b>' })
  t.equal(review.status, 200, 'the page still works')
  const decided = await client.post(`/approvals/${id}/decide`, { _csrf: csrfOf(review.text), decision: 'reject', reason: '<b>no</b>' })
  t.equal(decided.status, 303)
  const shown = await client.get(`/approvals/${id}`)
  t.match(shown.text, /Reason: &lt;b&gt;no&lt;\/b&gt;/)
})

t.test('a person not in PROXY_CONSOLE_APPROVERS sees the pages read-only, and a decision they post is 403 and decides nothing', async (t) => {
  const rig = await startConsoleRig(t)
  const id = await hold(rig, 250, 'ref-reader')
  const reader = new ConsoleClient(rig.url)
  await reader.signIn(rig.signins, READER)
  const page = await reader.get('/approvals')
  t.match(page.text, /rob@example\.com \(read-only\)/)
  t.notMatch(page.text, /\/review"/, 'no decision form is offered')
  const token = csrfOf(page.text)
  for (const step of ['review', 'decide']) {
    const refused = await reader.post(`/approvals/${id}/${step}`, { _csrf: token, decision: 'approve' })
    t.equal(refused.status, 403, step)
    t.equal(refused.headers.get('x-proxy-error'), 'APPROVAL_NOT_PERMITTED', step)
    t.match(refused.text, /not in PROXY_CONSOLE_APPROVERS/)
  }
  t.equal((await rig.proxy.shared.approvals?.get(id, Date.now()))?.record.status, 'pending', 'nothing decided')
  t.ok(rig.logs.records.some((e) => e['level'] === 40 && /not in PROXY_CONSOLE_APPROVERS/.test(String(e['msg'])) && e['email'] === READER))
  const domain = new ConsoleClient(rig.url)
  await domain.signIn(rig.signins, 'joe@finance.example.com')
  t.match((await domain.get('/approvals')).text, /\/review"/, 'an address of an approving domain decides')
})

t.test('two people deciding one approval at once: one wins, the other is shown it decided, and it is sent once', async (t) => {
  const rig = await startConsoleRig(t)
  const id = await hold(rig, 250, 'ref-race')
  const ann = new ConsoleClient(rig.url)
  const joe = new ConsoleClient(rig.url)
  await ann.signIn(rig.signins, APPROVER)
  await joe.signIn(rig.signins, 'joe@finance.example.com')
  const [annToken, joeToken] = [csrfOf((await ann.get('/approvals')).text), csrfOf((await joe.get('/approvals')).text)]
  const answers = await Promise.all([
    ann.post(`/approvals/${id}/decide`, { _csrf: annToken, decision: 'approve' }),
    joe.post(`/approvals/${id}/decide`, { _csrf: joeToken, decision: 'reject', reason: 'too much' }),
  ])
  t.same(answers.map((a) => a.status).sort(), [303, 409])
  const loser = answers.find((a) => a.status === 409)
  t.match(loser?.text, /Someone else decided this approval first/)
  t.match(loser?.text, /Decided by/, 'shown as decided, with who decided')
  const stored = (await rig.proxy.shared.approvals?.get(id, Date.now()))?.record
  t.match(stored, { decidedByCaller: 'console' })
  t.ok([APPROVER, 'joe@finance.example.com'].includes(stored?.decidedBy ?? ''))
  if (stored?.status === 'approved') await eventually(() => payouts(rig.provider).length === 1, { what: 'the approved payout sent' })
  t.equal(payouts(rig.provider).length, stored?.status === 'approved' ? 1 : 0, 'sent once at most')
})

t.test('a client outside PROXY_CONSOLE_ALLOWED_CLIENTS gets 403 on every page, the sign-in page included', async (t) => {
  const rig = await startConsoleRig(t, { env: { PROXY_CONSOLE_ALLOWED_CLIENTS: '10.0.0.0/8' } })
  const client = new ConsoleClient(rig.url)
  for (const path of ['/signin', '/approvals', '/console.css']) t.equal((await client.get(path)).status, 403, path)
  const link = await issueSigninLink(rig.signins, rig.url, APPROVER, Date.now())
  t.equal((await client.post('/signin', { secret: link.slice(link.indexOf('#') + 1) })).status, 403)
  t.equal(client.cookie, null)
})
