/**
 * Writes test/storage/fixtures/<name>/ with the built sidecar as it is now: run it with the build
 * whose files the upgrade test must open (`npm run tap -- test/storage/make-store-file.ts`, with
 * STORE_FIXTURE=<name>), then commit the directory. One of each record: a followed payment, a held
 * approval, an inbox event, a console sign-in link.
 */
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { paymentOf, payout, providerEvent, startSidecar } from '../payments/payments-harness.js'
import { AGENT_KEY, APPROVER_EMAIL, everyStore, STORE_FILES } from './store-file-rig.js'

const name = process.env['STORE_FIXTURE'] ?? 'fixture'

t.test(`writes test/storage/fixtures/${name}`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pap-store-file-'))
  const { env } = await everyStore(t, dir)
  const sidecar = await startSidecar(t, env)
  t.equal((await payout(sidecar.url, { amount: 50, currency: 'KES', externalReference: 'followed-1', recipient: '+254700000001' }, AGENT_KEY)).status, 200)
  await eventually(async () => (await paymentOf(sidecar.url, 'followed-1', AGENT_KEY))?.state === 'pending', { what: 'the payment followed' })
  t.equal((await payout(sidecar.url, { amount: 300, currency: 'KES', externalReference: 'held-1' }, AGENT_KEY)).status, 202)
  t.equal((await providerEvent(sidecar.intakeUrl, { transactionId: 'tx-unknown-1', status: 'successful', externalReference: 'elsewhere-1' })).status, 200)
  const link = runCli(t, ['console-link', '--as', APPROVER_EMAIL], env)
  t.equal((await link.exited).code, 0, link.stderr())
  sidecar.child.process.kill('SIGTERM')
  await sidecar.child.exited
  const out = new URL(`fixtures/${name}/`, import.meta.url).pathname
  mkdirSync(out, { recursive: true })
  for (const file of STORE_FILES) copyFileSync(join(dir, file), join(out, file))
})
