/**
 * A SQLite database owned by a thread of its own (src/sqlite/sqlite-thread.ts), on a real file, with
 * a small program (journal-program.ts): writes sent together share one transaction and each gets its
 * own answer; requests take effect in the order they were sent; a failed batch fails each of its
 * writes with the error's code; a thread that does not answer, or dies, fails its callers instead of
 * holding them, and serves again afterwards; close answers what was sent first.
 */
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startSqliteThread, SqliteThreadUnavailableError, type SqliteThread } from '../../src/sqlite/sqlite-thread.js'
import { eventually } from '../helpers/eventually.js'
import { captureLogger } from '../helpers/harness.js'
import { tempDir } from '../helpers/temp-dir.js'
import { JOURNAL_THREAD, type JournalProgram } from './journal-program.js'

interface Journal { thread: SqliteThread<JournalProgram>, open: () => void, logs: ReturnType<typeof captureLogger>['logs'] }

async function journal (t: Test, deadlineMs?: number): Promise<Journal> {
  const gate = new SharedArrayBuffer(4)
  const { logger, logs } = captureLogger()
  const thread = await startSqliteThread<JournalProgram>({ program: JOURNAL_THREAD, options: { path: join(tempDir(t), 'journal.db'), gate }, name: 'journal', log: logger, deadlineMs })
  const open = (): void => {
    Atomics.store(new Int32Array(gate), 0, 1)
    Atomics.notify(new Int32Array(gate), 0)
  }
  t.teardown(async () => {
    open()
    await thread.close()
  })
  return { thread, open, logs }
}

t.test('writes sent together are one transaction, each answered; a call sees every write sent before it', async (t) => {
  const { thread } = await journal(t)
  const first = await Promise.all(Array.from({ length: 50 }, (_, i) => thread.write(`a${i}`)))
  t.same(new Set(first), new Set([1]), 'the 50 writes of one turn: one batch')
  const [second, entries] = await Promise.all([thread.write('b'), thread.call('entries')])
  t.equal(second, 2, 'a later write: the next batch')
  t.equal(entries.length, 51, 'the call sent after it sees it')
  t.ok(thread.ready())
})

t.test('a batch that fails fails each of its writes with the error\'s code, and the thread goes on', async (t) => {
  const { thread } = await journal(t)
  await thread.write('taken')
  const outcomes = await Promise.allSettled([thread.write('new'), thread.write('taken')])
  for (const outcome of outcomes) t.match(outcome, { status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_UNIQUE' } })
  t.same((await thread.call('entries')).map((e) => e.entry), ['taken'], 'the whole batch was rolled back')
  t.equal(await thread.write('new'), 3, 'the next write is taken')
})

t.test('a thread that stops answering fails its requests at the deadline and is not ready until it answers again', async (t) => {
  const { thread, open } = await journal(t, 200)
  await thread.write('before')
  const held = thread.call('hold')
  const write = thread.write('meanwhile')
  await t.rejects(held, SqliteThreadUnavailableError)
  await t.rejects(write, SqliteThreadUnavailableError)
  t.notOk(thread.ready(), 'not ready while stuck')
  open()
  await eventually(async () => (await thread.call('entries').catch(() => [])).length > 0 && thread.ready(), { what: 'the thread answers again' })
  t.same((await thread.call('entries')).map((e) => e.entry), ['before', 'meanwhile'], 'a write failed at its deadline may still be committed (at least once)')
})

t.test('a thread that dies fails what it had not answered, is started again, and serves the same database', async (t) => {
  const { thread, logs } = await journal(t)
  await thread.write('before')
  await t.rejects(thread.call('exit'), SqliteThreadUnavailableError)
  t.notOk(thread.ready(), 'not ready while it starts again')
  await t.rejects(thread.write('while down'), SqliteThreadUnavailableError, 'a request meanwhile fails at once')
  await eventually(() => thread.ready(), { what: 'the thread started again' })
  await thread.write('after')
  t.same((await thread.call('entries')).map((e) => e.entry), ['before', 'after'])
  t.match(logs.find('thread stopped: starting it again'), [{ level: 50, thread: 'SQLite journal' }], 'logged as an error')
  t.match(logs.find('thread started again'), [{ level: 30, thread: 'SQLite journal' }])
})

t.test('a database that cannot be opened fails the start with its reason and code', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'file'), '')
  const { logger } = captureLogger()
  await t.rejects(startSqliteThread<JournalProgram>({ program: JOURNAL_THREAD, options: { path: join(dir, 'file', 'journal.db'), gate: new SharedArrayBuffer(4) }, name: 'journal', log: logger }), { code: 'EEXIST', message: /file already exists/ })
})

t.test('close answers every request sent before it, then ends the thread; requests after it fail', async (t) => {
  const { thread } = await journal(t)
  const writes = Array.from({ length: 10 }, (_, i) => thread.write(`w${i}`))
  const closed = thread.close()
  await t.rejects(thread.write('late'), SqliteThreadUnavailableError)
  t.same(await Promise.all(writes), Array.from({ length: 10 }, () => 1))
  await closed
  t.notOk(thread.ready())
})

t.test('an idle thread does not keep its process alive: a command that forgets to close still exits', async (t) => {
  const script = join(tempDir(t), 'forgets.mts')
  writeFileSync(script, `
    import { startSqliteThread } from ${JSON.stringify(fileURLToPath(new URL('../../src/sqlite/sqlite-thread.ts', import.meta.url)))}
    const thread = await startSqliteThread({ program: ${JSON.stringify(JOURNAL_THREAD)}, options: { path: process.argv[2], gate: new SharedArrayBuffer(4) }, name: 'journal', log: console })
    await thread.write('one')
    console.log(JSON.stringify(await thread.call('entries')))
  `)
  const out = execFileSync(process.execPath, [...process.execArgv, script, join(tempDir(t), 'journal.db')], { encoding: 'utf8', timeout: 60_000 })
  t.same(JSON.parse(out), [{ entry: 'one', batch: 1 }], 'answered, then exited by itself')
})
