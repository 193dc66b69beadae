/**
 * `payments-auth-proxy approvals` on the real built process (SPEC §11), beside a sidecar on the same
 * store: a command run with another sealing secret than the sidecar's writes nothing and says why
 * (it can never strand a payment); what an agent chose (a reference holding terminal escapes or a
 * bare CR) is printed escaped, so the person reads what will be sent; usage that says what is
 * missing; decisions printed as `show` prints them.
 */
import t from 'tap'
import { runCli } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { AGENT_KEY, SEALING_SECRET, decide, pay, payouts, startApprovalsRig, type ApprovalsRig, type HeldAnswer } from './approvals-harness.js'

/** An ESC or a bare CR as the terminal would receive it. */
const rawControl = (text: string): boolean => text.includes('\u001b') || text.includes('\r')

const OTHER_SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`

async function command (t: Parameters<typeof runCli>[0], rig: ApprovalsRig, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null, out: string, err: string }> {
  const child = runCli(t, ['approvals', ...args], { ...commandEnv(rig), ...env })
  const { code } = await child.exited
  return { code, out: child.stdout(), err: child.stderr() }
}

/** The sidecar's own store and sealing secret, as an operator's shell beside it has them. */
function commandEnv (rig: ApprovalsRig): Record<string, string> {
  return {
    PAYMENTS_FIAT_BASE_URL: 'http://127.0.0.1:1/api/b2b',
    PAYMENTS_SANDBOX_API_KEY: 'HC_sandbox-key-for-the-command',
    PAYMENTS_SANDBOX_PUBLIC_KEY: 'sandbox-public-key',
    PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET,
    PROXY_WEBHOOK_STORE_PATH: rig.storePath,
  }
}

t.test('a decision made with another sealing secret than the sidecar\'s writes nothing, exits 1 and says why; the right one then decides', async (t) => {
  const rig = await startApprovalsRig(t)
  const held = { amount: '300', currency: 'KES', externalReference: 'cli-1' }
  const { approval } = await (await pay(rig.proxy, held)).json() as HeldAnswer
  const wrong = await command(t, rig, ['approve', approval.id, '--by', 'Ann'], { PROXY_APPROVAL_SEALING_SECRET: OTHER_SECRET })
  t.equal(wrong.code, 1)
  t.match(wrong.err, /does not verify with this PROXY_APPROVAL_SEALING_SECRET: either it is not the sidecar's, or the record was changed in the store\. Nothing was written\./)
  t.notOk(`${wrong.out}${wrong.err}`.includes(OTHER_SECRET), 'the secret is never printed')
  t.equal((await pay(rig.proxy, held)).status, 202, 'still pending: the agent\'s retry is held, not 409 forever')
  const listed = await command(t, rig, ['list', '--json'], { PROXY_APPROVAL_SEALING_SECRET: OTHER_SECRET })
  t.match(JSON.parse(listed.out), { id: approval.id, status: 'rejected', reason: 'record failed verification' }, 'with another secret it is never shown as pending')
  t.equal((await decide(rig.proxy, approval.id, 'approve')).status, 200, 'a person can still decide it')
  await eventually(() => payouts(rig.provider).length === 1, { what: 'the approved payout' })
})

t.test('what an agent chose is printed escaped: no escape sequence moves the cursor, no bare CR forges a row', async (t) => {
  const rig = await startApprovalsRig(t)
  const forged = { amount: '150', currency: 'KES', externalReference: 'inv-9\u001b[49G5 KES', recipient: '+254700000009' }
  const row = { amount: '200', currency: 'KES', externalReference: 'inv-10\rapr_fake\tapproved\tpayout-agent\t5 KES' }
  for (const body of [forged, row]) t.equal((await pay(rig.proxy, body)).status, 202)
  const list = await command(t, rig, ['list'])
  t.equal(list.code, 0)
  t.notOk(rawControl(list.out), 'no raw ESC or CR')
  t.match(list.out, /inv-9\\x1b\[49G5 KES/, 'the escape spelled out')
  t.match(list.out, /inv-10\\rapr_fake\\tapproved\\tpayout-agent\\t5 KES/, 'the CR and tabs spelled out, in one cell')
  t.equal(list.out.trim().split('\n').length, 3, 'a header and two rows')
  const json = await command(t, rig, ['list', '--json'])
  t.notOk(rawControl(json.out))
  t.same(json.out.trim().split('\n').map((line) => (JSON.parse(line) as { externalReference: string }).externalReference), [forged.externalReference, row.externalReference], 'the JSON is the same value')
  const id = (JSON.parse(json.out.trim().split('\n')[0] ?? '{}') as { id: string }).id
  const shown = await command(t, rig, ['show', id])
  t.notOk(rawControl(shown.out))
  t.match(shown.out, /"externalReference": "inv-9\\u001b\[49G5 KES"/, 'show spells it out too')
})

t.test('show prints the query a held request is sent with', async (t) => {
  const rig = await startApprovalsRig(t)
  const res = await fetch(`${rig.proxy.url}/sandbox/fiat/payouts?channel=mpesa`, { method: 'POST', headers: { authorization: `Bearer ${AGENT_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: '300', currency: 'KES', externalReference: 'cli-q' }) })
  const { approval } = await res.json() as HeldAnswer
  t.match(JSON.parse((await command(t, rig, ['show', approval.id])).out), { id: approval.id, query: 'channel=mpesa' })
})

t.test('approve and reject say what is missing; a decision prints the approval as show does', async (t) => {
  const rig = await startApprovalsRig(t)
  const { approval } = await (await pay(rig.proxy, { amount: '300', currency: 'KES', externalReference: 'cli-3' })).json() as HeldAnswer
  const noBy = await command(t, rig, ['approve', approval.id])
  t.equal(noBy.code, 2)
  t.match(noBy.err, /^payments-auth-proxy: approve needs --by <name>: who decides/)
  const noId = await command(t, rig, ['reject', '--by', 'Bob'])
  t.match(noId.err, /^payments-auth-proxy: reject needs the approval's id/)
  const rejected = await command(t, rig, ['reject', approval.id, '--by', 'Bob', '--reason', 'not this month'])
  t.equal(rejected.code, 0, rejected.err)
  const shown = await command(t, rig, ['show', approval.id])
  t.equal(rejected.out, shown.out, 'the same pretty JSON as show')
  t.match(JSON.parse(rejected.out), { id: approval.id, status: 'rejected', decidedBy: 'Bob', decidedByCaller: 'cli', reason: 'not this month' })
  t.ok(rejected.out.split('\n').length > 5, 'indented, one member a line')
})
