/**
 * `payments-auth-proxy payments list|show|recheck` (SPEC §12) on the built CLI, over a store the
 * sidecar would have written: what it prints (what a caller or the provider chose, terminal-safe),
 * how it finds a payment (id or reference), its exit codes.
 */
import t from 'tap'
import { join } from 'node:path'
import type { Env } from '../../src/load-config.js'
import { createSqlitePaymentStore } from '../../src/payments/sqlite-payment-store.js'
import { runCli } from '../helpers/child-proxy.js'
import { paymentFixture, T0 } from './payment-fixture.js'
import { SEALING_SECRET, sealedForTests, SIGNING_SECRET, tempDir } from './payments-harness.js'

const HOSTILE = 'inv\u001b[2J\u202eevil\r\nfake row'
/** What a terminal would act on or hide: controls (but the tabs and newlines of the output's own layout) and the bidi override. */
const unsafe = (text: string): boolean => [...text].some((c) => {
  const n = c.codePointAt(0) ?? 0
  return (n < 0x20 && n !== 0x09 && n !== 0x0a) || n === 0x7f || n === 0x202e
})

async function run (t: Parameters<typeof runCli>[0], args: string[], env: Env): Promise<{ code: number | null, out: string, err: string }> {
  const child = runCli(t, ['payments', ...args], env)
  const { code } = await child.exited
  return { code, out: child.stdout(), err: child.stderr() }
}

t.test('list, show and recheck on the sidecar\'s store, printing what callers and the provider chose terminal-safe', async (t) => {
  const dir = tempDir(t)
  const env: Env = {
    PAYMENTS_FIAT_BASE_URL: 'http://127.0.0.1:9/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_k', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_k', PROXY_EGRESS_IP_URL: 'off',
    PROXY_PAYMENTS: 'on', PROXY_SEALING_SECRET: SEALING_SECRET, PROXY_PAYMENTS_NOTIFY_URL: 'http://127.0.0.1:9/n', PROXY_WEBHOOK_SIGNING_SECRET: SIGNING_SECRET, PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db'),
  }
  const store = sealedForTests(await createSqlitePaymentStore(join(dir, 'webhooks.db')))
  const pending = paymentFixture({ id: 'pay_PENDINGPENDINGPENDING0', key: 'k1', externalReference: HOSTILE, state: 'pending', transactionId: 'tx\u0007bell', providerStatus: 'pending', createdAtMs: T0 })
  const settled = paymentFixture({ id: 'pay_SETTLEDSETTLEDSETTLED0', key: 'k2', externalReference: 'inv-2', state: 'succeeded', transactionId: 'tx-2', settledAtMs: T0 + 5000, settledBy: 'lookup', createdAtMs: T0 + 1000, nextLookupAtMs: null })
  const unknown = paymentFixture({ id: 'pay_UNKNOWNUNKNOWNUNKNOWN0', key: 'k3', externalReference: 'inv-3', state: 'unknown', createdAtMs: T0 + 2000 })
  for (const p of [pending, settled, unknown]) await store.create(p)
  await store.close()

  const table = await run(t, ['list'], env)
  t.equal(table.code, 0, table.err)
  const rows = table.out.trim().split('\n')
  t.equal(rows.length, 4, 'a header and three rows: no row forged by the reference')
  t.equal(rows[0], 'id\tstate\tcaller\tamount\treference\ttransaction\tcreated\tsettled by')
  t.equal(rows[3], `${pending.id}\tpending\tanonymous\t100 KES\tinv\\x1b[2J\\u202eevil\\r\\nfake row\ttx\\x07bell\t${new Date(T0).toISOString()}\t-`)
  t.equal(rows[1]?.split('\t')[0], unknown.id, 'newest first')
  t.notOk(unsafe(table.out), 'no control or bidi character reaches the terminal')

  const json = await run(t, ['list', '--state', 'pending', '--json'], env)
  t.equal(json.code, 0)
  const listed = json.out.trim().split('\n').map((l) => JSON.parse(l) as { id: string, externalReference: string, transactionId: string })
  t.same(listed.map((p) => p.id), [pending.id])
  t.equal(listed[0]?.externalReference, HOSTILE, 'the JSON holds the same value, escaped')
  t.notOk(unsafe(json.out))
  t.same((await run(t, ['list', '--since', new Date(T0 + 1500).toISOString(), '--json'], env)).out.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id), [unknown.id])

  const shown = await run(t, ['show', 'inv-2'], env)
  t.equal(shown.code, 0)
  t.match(JSON.parse(shown.out), { id: settled.id, state: 'succeeded', settledBy: 'lookup', settledAt: Math.floor((T0 + 5000) / 1000) })
  t.match(JSON.parse((await run(t, ['show', unknown.id], env)).out), { id: unknown.id, state: 'unknown' }, 'by id')
  const missing = await run(t, ['show', 'no\u001b[31mref'], env)
  t.equal(missing.code, 1)
  t.equal(missing.err, 'payments-auth-proxy: no payment no\\x1b[31mref\n')

  const recheck = await run(t, ['recheck', settled.id, HOSTILE, 'inv-3', 'nope'], env)
  t.equal(recheck.code, 1, 'one was not found')
  t.match(recheck.out, `${settled.id}\tsucceeded\talready final`)
  t.match(recheck.out, `${pending.id}\tpending\tlooked up again within 2 s by a running sidecar`)
  t.match(recheck.out, `${unknown.id}\tunknown\tcannot be looked up`)
  t.match(recheck.err, 'no payment nope')
  const reopened = await createSqlitePaymentStore(join(dir, 'webhooks.db'))
  t.match(await reopened.get(pending.id), { lookupNow: true, dueAtMs: 0, state: 'pending' }, 'due at once for the sidecar')
  await reopened.close()
})

t.test('usage and configuration errors exit 2', async (t) => {
  const env: Env = { PAYMENTS_FIAT_BASE_URL: 'http://127.0.0.1:9/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_k', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_k', PROXY_EGRESS_IP_URL: 'off' }
  const off = await run(t, ['list'], env)
  t.equal(off.code, 2)
  t.match(off.err, /payments are not followed \(PROXY_PAYMENTS=on/)
  for (const args of [[], ['list', 'x'], ['list', '--state', 'done'], ['list', '--since', 'yesterday'], ['show'], ['recheck'], ['approve', 'x']]) {
    const bad = await run(t, args, env)
    t.equal(bad.code, 2, args.join(' '))
    t.match(bad.err, /usage: payments-auth-proxy payments list/)
  }
  // Asked for, the usage is an answer, not an error (the CLI's rule for every command).
  const help = await run(t, ['--help'], env)
  t.equal(help.code, 0, '--help')
  t.match(help.out, /^usage: payments-auth-proxy payments list/)
})
