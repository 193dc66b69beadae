/**
 * The thread side of a SQLite thread (sqlite-thread.ts): a store's *program* opens its database and
 * answers requests, synchronously, as better-sqlite3 does, here where blocking stalls no one else.
 *
 * Group commit: every write that reaches the thread in one turn of its event loop (all that were
 * sent while it was busy with the previous commit, its sync included) is handed to the program's
 * `writeBatch` together, to be written in one transaction and synced once; each is answered after
 * it. A call (a read, a claim, a listing) first commits the writes that came before it, so requests
 * take effect in the order they were sent. A batch is cut by `setImmediate`, not by a timer: a write
 * waits for no one who has not already arrived.
 *
 * A program's module starts serving at its top level, in the thread started for it:
 *
 *     export const MY_THREAD = import.meta.url
 *     if (isSqliteThread(MY_THREAD)) serveSqliteThread(openMyProgram)
 *
 * and its caller starts the thread with `startSqliteThread({ program: MY_THREAD, … })`. The module's
 * own URL, not a path beside it: in the bundle the module is a chunk whose name the build chooses.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads'
import { failureOf, type Answer } from '../threads/thread-calls.js'
import type { FromThread, Request, ToThread } from './sqlite-thread-messages.js'

/** A synchronous operation of a program; its arguments and result are structured-cloned. */
/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- each program declares its own parameters; callers see
   them through SqliteThread's types */
export type ProgramCall = (...args: any[]) => unknown

export interface SqliteProgram<
  W = unknown,
  R = unknown,
  C extends Record<string, ProgramCall> = Record<string, ProgramCall>,
> {
  /**
   * The writes that arrived together, in order: one result each, all in one transaction, or a throw for all of them.
   */
  writeBatch: (writes: readonly W[]) => R[]
  calls: C
  close: () => void
}

export interface ThreadData { program: string, options: unknown }

/** At most this many writes in one transaction; more wait for the next (a bounded commit). */
export const MAX_BATCH = 512

/** Whether this is the thread started for the program module at `program` (its `import.meta.url`). */
export function isSqliteThread (program: string): boolean {
  return !isMainThread && (workerData as Partial<ThreadData> | null)?.program === program
}

export function serveSqliteThread<O, W, R, C extends Record<string, ProgramCall>> (
  open: (options: O) => Promise<SqliteProgram<W, R, C>> | SqliteProgram<W, R, C>,
): void {
  const port = parentPort
  if (port === null) throw new Error('serveSqliteThread runs in a worker thread')
  const send = (message: FromThread): void => { port.postMessage(message) }
  type Program = SqliteProgram<W, R, C>
  let writes: Array<{ id: number, write: W }> = []
  let answers: Answer[] = []
  let scheduled = false

  const commit = (program: Program): void => {
    while (writes.length > 0) {
      const batch = writes.slice(0, MAX_BATCH)
      writes = writes.slice(batch.length)
      try {
        const results = program.writeBatch(batch.map((w) => w.write))
        batch.forEach((w, i) => { answers.push({ id: w.id, value: results[i] }) })
      } catch (err) {
        const failure = failureOf(err)
        for (const w of batch) answers.push({ id: w.id, failure })
      }
    }
  }
  const endOfTurn = (program: Program): void => {
    scheduled = false
    commit(program)
    if (answers.length > 0) send({ answers })
    answers = []
  }
  const serve = (program: Program, requests: readonly Request[]): void => {
    for (const request of requests) {
      if ('write' in request) {
        // The caller's SqliteThread sends only what this program's writeBatch takes.
        writes.push({ id: request.id, write: request.write as W })
        continue
      }
      commit(program)
      const call = program.calls[request.call]
      try {
        if (call === undefined) throw new Error(`no call named ${request.call}`)
        answers.push({ id: request.id, value: call(...request.args) })
      } catch (err) {
        answers.push({ id: request.id, failure: failureOf(err) })
      }
    }
    if (!scheduled) {
      scheduled = true
      setImmediate(() => { endOfTurn(program) })
    }
  }

  Promise.resolve()
    .then(() => open((workerData as ThreadData).options as O))
    .then((program) => {
      port.on('message', (message: ToThread) => {
        if ('requests' in message) {
          serve(program, message.requests)
          return
        }
        endOfTurn(program)
        program.close()
        port.close()
      })
      send({ opened: true })
    }, (err: unknown) => {
      send({ openFailed: failureOf(err) })
      port.close()
    })
}
