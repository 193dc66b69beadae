/**
 * Issue 57, one storage layer: a store file written by the build before versioned migrations
 * (test/storage/fixtures/0.1.0-29ebda8, made by make-store-file.ts) opens with this one and keeps
 * every record: the followed payment (its seals still verify), the held approval, the inbox's event
 * and the console's link; each store's migrations are recorded once, and a new payout is followed
 * in the upgraded tables. A file a newer build migrated is refused in one line, not misread.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { openDatabase } from '../../src/sqlite/open-database.js'
import { runCli } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { paymentOf, payout, startSidecar } from '../payments/payments-harness.js'
import { AGENT_KEY, everyStore } from './store-file-rig.js'

const FIXTURE = new URL('fixtures/0.1.0-29ebda8/', import.meta.url).pathname

function copyOfFixture (t: Parameters<typeof everyStore>[0]): string {
  const dir = mkdtempSync(join(tmpdir(), 'pap-upgrade-'))
  cpSync(FIXTURE, dir, { recursive: true })
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

/** The operator commands' `--json`: one record a line. */
function jsonLines (text: string): unknown[] {
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown)
}

async function rows (path: string, sql: string): Promise<unknown[]> {
  const db = await openDatabase(path)
  try {
    return db.prepare(sql).all()
  } finally {
    db.close()
  }
}

t.test('a file written before migrations opens and keeps every record', async (t) => {
  const dir = copyOfFixture(t)
  const { env } = await everyStore(t, dir)
  const sidecar = await startSidecar(t, env)
  // Its state is the worker's now (the fixture's provider is gone, so it may be stale by now): read through its seals, never unverified.
  const followed = await paymentOf(sidecar.url, 'followed-1', AGENT_KEY)
  t.match(followed, { amount: '50', currency: 'KES', caller: 'agent-a' }, 'the followed payment, its seals verified')
  t.not(followed?.state, 'unverified')

  const approvals = runCli(t, ['approvals', 'list', '--json'], env)
  t.equal((await approvals.exited).code, 0, approvals.stderr())
  t.match(jsonLines(approvals.stdout()), [{ caller: 'agent-a', status: /^(pending|expired)$/ }], 'the held approval')
  const events = runCli(t, ['webhooks', 'list', '--json'], env)
  t.equal((await events.exited).code, 0, events.stderr())
  t.equal(jsonLines(events.stdout()).length, 1, 'the inbox\'s event')
  t.same(await rows(join(dir, 'webhooks.db'), 'SELECT count(*) AS n FROM console_links'), [{ n: 1 }], 'the console\'s link')

  const migrated = await rows(join(dir, 'webhooks.db'), 'SELECT store, id FROM schema_migrations ORDER BY store, id')
  t.same(migrated, [
    { store: 'approvals', id: '1-tables' },
    { store: 'console', id: '1-tables' },
    { store: 'outbox', id: '1-tables' }, { store: 'outbox', id: '2-order-heads' }, { store: 'outbox', id: '3-claim-indexes' },
    { store: 'payments', id: '1-tables' },
    { store: 'payouts', id: '1-tables' },
  ], 'each store\'s migrations recorded once')

  t.equal((await payout(sidecar.url, { amount: 40, currency: 'KES', externalReference: 'after-upgrade' }, AGENT_KEY)).status, 200)
  await eventually(async () => (await paymentOf(sidecar.url, 'after-upgrade', AGENT_KEY))?.state === 'pending', { what: 'a new payment followed in the upgraded tables' })
})

t.test('a file a newer build migrated is refused in one line', async (t) => {
  const dir = copyOfFixture(t)
  const db = await openDatabase(join(dir, 'webhooks.db'))
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (store TEXT NOT NULL, id TEXT NOT NULL, applied_at INTEGER NOT NULL, PRIMARY KEY (store, id))')
  db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run('payments', '9-from-the-future', Date.now())
  db.close()
  const { env } = await everyStore(t, dir)
  const child = runCli(t, ['payments', 'list'], env)
  t.equal((await child.exited).code, 1)
  const lines = child.stderr().trim().split('\n')
  t.equal(lines.length, 1, child.stderr())
  t.match(lines[0], /the payments tables of .*webhooks\.db were written by a newer version \(migration 9-from-the-future is unknown to this one\)/)
})
