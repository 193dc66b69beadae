import t from 'tap'
import { errorOf, failureOf, WaitingCalls } from '../../src/threads/thread-calls.js'

/** A call added to `calls`, and what became of it. */
function track (calls: WaitingCalls): { id: number, outcome: () => { value?: unknown, err?: Error & { code?: string } } | null } {
  let outcome: { value?: unknown, err?: Error & { code?: string } } | null = null
  const id = calls.add((value) => { outcome = { value } }, (err) => { outcome = { err } })
  return { id, outcome: () => outcome }
}

t.test('an answer settles its own call, by id, once', async (t) => {
  const calls = new WaitingCalls()
  const a = track(calls)
  const b = track(calls)
  t.not(a.id, b.id)
  calls.answer({ id: b.id, value: 42 })
  t.same(b.outcome(), { value: 42 })
  t.equal(a.outcome(), null, 'the other still waits')
  t.equal(calls.size, 1)
  calls.answer({ id: b.id, value: 43 })
  t.same(b.outcome(), { value: 42 }, 'a second answer for the same id is dropped')
  calls.answer({ id: a.id, failure: { message: 'disk full', code: 'SQLITE_FULL' } })
  t.equal(a.outcome()?.err?.message, 'disk full')
  t.equal(a.outcome()?.err?.code, 'SQLITE_FULL', 'the code crosses')
  t.equal(calls.size, 0)
})

t.test('failing calls: those named, or all; an answer after it is dropped', async (t) => {
  const calls = new WaitingCalls()
  const [a, b, c] = [track(calls), track(calls), track(calls)]
  calls.fail(new Error('past its deadline'), [a.id, 999])
  t.equal(a.outcome()?.err?.message, 'past its deadline')
  t.notOk(calls.has(a.id))
  t.ok(calls.has(b.id) && calls.has(c.id))
  calls.answer({ id: a.id, value: 'late' })
  t.equal(a.outcome()?.err?.message, 'past its deadline', 'the late answer changes nothing')
  calls.fail(new Error('the thread stopped'))
  t.equal(b.outcome()?.err?.message, 'the thread stopped')
  t.equal(c.outcome()?.err?.message, 'the thread stopped')
  t.equal(calls.size, 0)
})

t.test('an error crosses as its message and code, and is made an Error again', async (t) => {
  const rows: Array<[unknown, { message: string, code?: string }]> = [
    [Object.assign(new Error('no such table'), { code: 'SQLITE_ERROR' }), { message: 'no such table', code: 'SQLITE_ERROR' }],
    [new TypeError('bad'), { message: 'bad' }],
    [Object.assign(new Error('odd'), { code: 7 }), { message: 'odd' }],
    ['a string thrown', { message: 'a string thrown' }],
  ]
  for (const [thrown, failure] of rows) {
    t.same(failureOf(thrown), failure)
    const err = errorOf(failureOf(thrown))
    t.ok(err instanceof Error)
    t.equal(err.message, failure.message)
    t.equal(err.code, failure.code)
  }
})
