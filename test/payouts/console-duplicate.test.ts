/**
 * SPEC §16 in the console (SPEC §14), as `npm start` runs it: a re-planned payout held for a person
 * is shown on its card beside the earlier payment it probably repeats, linked to that payment's page,
 * with the reason; every text a caller chose escaped.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { runCli } from '../helpers/child-proxy.js'
import { APPROVER, ConsoleClient, freePort } from '../console/console-rig.js'
import { payout, setting, startSidecar } from '../payments/payments-harness.js'

const AGENT = 'pak_console-duplicate-agent-0123456789abcdefghij'

t.test('a held duplicate\'s card shows the earlier payment beside it', async (t) => {
  const port = await freePort()
  const setup = await setting(t, {
    PROXY_CONSOLE_LISTEN: `127.0.0.1:${port}`,
    PROXY_CONSOLE_APPROVERS: APPROVER,
    PROXY_APPROVAL_SIGNING_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  })
  const callers = join(setup.dir, 'callers.yaml')
  writeFileSync(callers, `callers:\n  - { id: agent, keySha256: ${keySha256(AGENT)}, allow: [{}], amountLimits: [{ amount: /amount, currency: /currency, perDay: { KES: 100000 }, approveAbove: { KES: 1000 } }] }\n`)
  const env = { ...setup.env, PROXY_CALLERS_FILE: callers }
  const sidecar = await startSidecar(t, env)
  const first = await payout(sidecar.url, { amount: 40, currency: 'KES', externalReference: 'inv <i>7</i>', recipient: '+254700000777' }, AGENT)
  t.equal(first.status, 200)
  const id = first.headers.get('payment-id') ?? ''
  const held = await payout(sidecar.url, { amount: 40, currency: 'KES', externalReference: 'inv-7-again', recipient: '254700000777' }, AGENT)
  t.equal(held.status, 202)

  const command = runCli(t, ['console-link', '--as', APPROVER], env)
  t.equal((await command.exited).code, 0, command.stderr())
  const link = command.stdout().trim()
  const client = new ConsoleClient(`http://127.0.0.1:${port}`)
  t.equal((await client.post('/signin', { secret: link.slice(link.indexOf('#') + 1) })).status, 303)
  const page = await client.get('/approvals')
  t.equal(page.status, 200)
  t.match(page.text, `<dt>Probable duplicate of</dt><dd class="duplicate-of"><a href="/payments/${id}">`, 'linked to the earlier payment\'s page')
  t.match(page.text, 'inv &lt;i&gt;7&lt;/i&gt;', 'its reference, escaped')
  t.notMatch(page.text, '<i>7</i>')
  t.match(page.text, `Reason: probable duplicate of ${id}`)
  t.equal((await client.get(`/payments/${id}`)).status, 200, 'and that page opens')
})
