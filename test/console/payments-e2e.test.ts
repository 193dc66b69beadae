/**
 * The console's payments page (SPEC §14 over §12) as `npm start` runs it: the built process with
 * payments, the inbox and the console on. A payout the provider never settles goes stale, one whose
 * forward got no answer is unknown (stale, too, once its schedule ran out); both are listed with their reference; a reader cannot recheck;
 * an approver's recheck is looked up by the running sidecar within 2 s and settles the payment.
 */
import t from 'tap'
import { join } from 'node:path'
import { openDatabase } from '../../src/sqlite/open-database.js'
import { runCli } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { payout, paymentOf, setting, startSidecar, waitForState } from '../payments/payments-harness.js'
import { APPROVER, ConsoleClient, csrfOf, freePort, READER } from './console-rig.js'

// Kill, restart and flood cycles: a loaded 2-core machine needs more than tap's 60 s for the file.
t.setTimeout(300_000)

t.test('stale and unknown payments listed; a reader cannot recheck; an approver\'s recheck settles one within 2 s', async (t) => {
  const port = await freePort()
  const { provider, env } = await setting(t, { PROXY_PAYMENTS_LOOKUP_SCHEDULE: '1s,2s', PROXY_CONSOLE_LISTEN: `127.0.0.1:${port}`, PROXY_CONSOLE_APPROVERS: APPROVER })
  const sidecar = await startSidecar(t, env)
  const sent = await payout(sidecar.url, { amount: 1250, currency: 'KES', externalReference: 'chase <b>1</b>' })
  const { data } = await sent.json() as { data: { transactionId: string } }
  let reset = true
  provider.setUpstreamHandler((req, res) => {
    if (req.method !== 'POST' || !reset) return false
    res.socket?.destroy()
    return true
  })
  t.equal((await payout(sidecar.url, { amount: 7, currency: 'KES', externalReference: 'chase-lost' })).status, 502)
  reset = false
  const unknown = await paymentOf(sidecar.url, 'chase-lost')
  t.equal(unknown?.state, 'unknown')
  // Both chased: the unknown one may be stale too by now, once its own schedule ran out.
  const stale = await waitForState(sidecar.url, 'chase <b>1</b>', 'stale', 10_000, () => sidecar.child.stdout())

  const signIn = async (email: string): Promise<ConsoleClient> => {
    const command = runCli(t, ['console-link', '--as', email], env)
    t.equal((await command.exited).code, 0, command.stderr())
    const link = command.stdout().trim()
    const client = new ConsoleClient(`http://127.0.0.1:${port}`)
    t.equal((await client.post('/signin', { secret: link.slice(link.indexOf('#') + 1) })).status, 303, `${email} signed in`)
    return client
  }
  const reader = await signIn(READER)
  const page = await reader.get('/payments')
  t.equal(page.status, 200)
  t.match(page.text, /Unverified, stale and unknown payments <span class="count">\(2\)<\/span>/)
  t.match(page.text, 'chase &lt;b&gt;1&lt;/b&gt;', 'the reference as sent, escaped')
  t.notMatch(page.text, '<b>1</b>')
  t.ok(page.text.indexOf('chase-lost') < page.text.indexOf('chase &lt;b&gt;'), 'newest first')
  t.notMatch(page.text, /action="\/payments\/[^"]*\/recheck"/, 'no recheck for a reader')
  t.equal((await reader.post(`/payments/${stale.id}/recheck`, { _csrf: csrfOf(page.text) })).status, 403, 'a reader reads only')
  t.equal((await paymentOf(sidecar.url, 'chase <b>1</b>'))?.state, 'stale')
  const byReference = await reader.get('/payments/find?q=chase-lost')
  t.equal(byReference.headers.get('location'), `/payments/${unknown?.id ?? 'none'}`, 'a reference opens its payment')
  t.equal((await reader.get(`/payments/find?q=${data.transactionId}`)).headers.get('location'), `/payments/${stale.id}`, 'so does a transaction id')
  const own = await reader.get(`/payments/${stale.id}`)
  t.match(own.text, 'stale: the provider has not said')
  t.match(own.text, '1,250')
  const every = await reader.get('/payments?state=all')
  t.ok(every.text.includes(`href="/payments/${stale.id}"`) && every.text.includes(`href="/payments/${unknown?.id ?? 'none'}"`), 'every payment listed')

  provider.transactions.setStatus(data.transactionId, 'successful')
  const approver = await signIn(APPROVER)
  const chased = await approver.get('/payments')
  t.match(chased.text, `action="/payments/${stale.id}/recheck"`)
  t.match(chased.text, `action="/payments/${unknown?.id ?? 'none'}/recheck"`)
  const asked = Date.now()
  t.equal((await approver.post(`/payments/${stale.id}/recheck`, { _csrf: csrfOf(chased.text) })).status, 303)
  const settled = await waitForState(sidecar.url, 'chase <b>1</b>', 'succeeded', 5_000)
  t.ok(Date.now() - asked < 2_000, 'looked up within 2 s of the recheck')
  t.match(settled, { settledBy: 'lookup' })
  await eventually(async () => !(await approver.get('/payments')).text.includes(stale.id), { what: 'the settled payment off the page' })
  await sidecar.child.waitFor(/"msg":"payment recheck from the console"/)
})

t.test('a payment record edited in the store is shown unverified: what its seals vouch for, no amount it cannot, no recheck', async (t) => {
  const port = await freePort()
  const { dir, env } = await setting(t, { PROXY_CONSOLE_LISTEN: `127.0.0.1:${port}`, PROXY_CONSOLE_APPROVERS: APPROVER })
  const sidecar = await startSidecar(t, env)
  t.equal((await payout(sidecar.url, { amount: 1250, currency: 'KES', externalReference: 'edited-1' })).status, 200)
  const { id } = await waitForState(sidecar.url, 'edited-1', 'pending')
  const db = await openDatabase(join(dir, 'webhooks.db'))
  db.prepare('UPDATE payments SET record = json_set(record, \'$.amount\', \'99999\', \'$.state\', \'succeeded\') WHERE id = ?').run(id)
  db.close()
  const command = runCli(t, ['console-link', '--as', APPROVER], env)
  t.equal((await command.exited).code, 0, command.stderr())
  const link = command.stdout().trim()
  const approver = new ConsoleClient(`http://127.0.0.1:${port}`)
  t.equal((await approver.post('/signin', { secret: link.slice(link.indexOf('#') + 1) })).status, 303)
  const page = await approver.get('/payments')
  t.match(page.text, /Unverified, stale and unknown payments <span class="count">\(1\)<\/span>/)
  t.match(page.text, '<span class="badge">unverified</span> record failed verification: not to be trusted')
  t.match(page.text, 'edited-1')
  t.notMatch(page.text, '99,999', 'never the edited amount')
  t.notMatch(page.text, '1,250', 'nor the one its broken seal can no longer vouch for')
  t.notMatch(page.text, `action="/payments/${id}/recheck"`, 'no recheck: only a look-up of its sealed transaction id settles it')
})
