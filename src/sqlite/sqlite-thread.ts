/**
 * A SQLite database owned by a worker thread of its own, so that a store's synchronous work (its
 * statements, the sync of every synced commit, the WAL's checkpoints) never holds the event loop
 * that serves HTTP: the loop only sends requests and hears answers (docs/performance.md, "Webhook
 * inbox"). Any SQLite store can use it: it writes a *program* (sqlite-thread-program.ts) and keeps
 * its own contract on this side.
 *
 * - Requests made in one turn of the event loop go to the thread in one message; the thread writes
 *   together, in one transaction and one sync, every write that reached it while it was busy.
 * - Every request is answered within `deadlineMs` (judged once the answers already here are read),
 *   or rejected with SqliteThreadUnavailableError: a thread stuck in the sync of a dead disk holds no
 *   caller (an inbox's intake answers 503 within SPEC §10's 5 s). A write rejected so may still be committed
 *   when the thread comes back (a sender told 503 sends it again; at least once).
 * - A thread that dies (an uncaught error, a crash of its program) fails what it had not answered,
 *   and is started again (threads/restarting-worker.ts), its program opening the database again.
 *   Requests made meanwhile fail at once.
 * - `close` lets the thread answer everything sent, then closes its database.
 *
 * In the tests, Node 22 and 24 load a TypeScript program in the thread under tsx (the worker
 * inherits `--import=tsx`); the built program is JavaScript.
 */
import { Worker } from 'node:worker_threads'
import type { Logger } from 'pino'
import { startRestartingWorker, type RestartingWorker } from '../threads/restarting-worker.js'
import { errorOf, WaitingCalls, type Answer } from '../threads/thread-calls.js'
import type { FromThread, Request, ToThread } from './sqlite-thread-messages.js'
import type { SqliteProgram, ThreadData } from './sqlite-thread-program.js'

export const DEFAULT_DEADLINE_MS = 4_000

/** The thread did not answer: it stopped, is starting again, or took longer than its deadline. */
export class SqliteThreadUnavailableError extends Error {
  constructor (message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'SqliteThreadUnavailableError'
  }
}

/** A program's types, as its module declares them: what it writes, what a write answers, its calls. */
type Parts<P> = P extends SqliteProgram<infer W, infer R, infer C> ? { write: W, result: R, calls: C } : never
type WriteOf<P> = Parts<P>['write']
type ResultOf<P> = Parts<P>['result']
type CallsOf<P> = Parts<P>['calls']

export interface SqliteThread<P> {
  /** Committed with the other writes that reach the thread together; rejects with the batch's error. */
  write: (write: WriteOf<P>) => Promise<ResultOf<P>>
  call: <K extends keyof CallsOf<P> & string>(
    name: K,
    ...args: Parameters<CallsOf<P>[K]>
  ) => Promise<ReturnType<CallsOf<P>[K]>>
  /** Running and answering: false while it starts again, or while a request waits past its deadline. */
  ready: () => boolean
  close: () => Promise<void>
}

export interface SqliteThreadOptions {
  /** The program module's `import.meta.url` (sqlite-thread-program.ts). */
  program: string
  /** Handed to the program's `open` at every start of the thread; structured-cloned. */
  options: unknown
  /** Names the thread in log lines. */
  name: string
  log: Logger
  deadlineMs?: number
}

/** Resolves once the program has opened its database; rejects with the reason it could not (its code kept). */
export async function startSqliteThread<P> (options: SqliteThreadOptions): Promise<SqliteThread<P>> {
  const { log, name } = options
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS
  const waiting = new WaitingCalls()
  let outgoing: Request[] = []
  let stalled = false
  let closing: Promise<void> | null = null
  let idle: Array<() => void> = []
  // Set once the first thread has opened its database.
  let thread: RestartingWorker | null = null
  /** The thread keeps the process alive only while a request waits for it (a command exits when done). */
  const waited = (): void => {
    if (waiting.size > 0) return
    thread?.current()?.unref()
    for (const done of idle) done()
    idle = []
  }
  const fail = (ids: Iterable<number> | undefined, reason: string): void => {
    waiting.fail(new SqliteThreadUnavailableError(reason), ids)
    waited()
  }
  const answer = (answers: readonly Answer[]): void => {
    for (const answer of answers) waiting.answer(answer)
    waited()
  }

  /** Starts a thread; resolves once its database is open, rejects when it cannot be. */
  const spawn = (): Promise<Worker> => new Promise((resolve, reject) => {
    const data: ThreadData = { program: options.program, options: options.options }
    const worker = new Worker(new URL(options.program), { workerData: data, name: `sqlite ${name}` })
    let opened = false
    worker.on('message', (message: FromThread) => {
      if ('answers' in message) {
        stalled = false
        answer(message.answers)
      } else if ('opened' in message) {
        opened = true
        resolve(worker)
      } else {
        reject(errorOf(message.openFailed))
        void worker.terminate()
      }
    })
    worker.on('error', (err) => {
      if (opened) log.error({ err, thread: name }, 'SQLite thread failed')
      else reject(err)
    })
    worker.on('exit', () => {
      // Nothing it was sent will be answered now.
      fail(undefined, 'the store\'s thread stopped')
      if (!opened) reject(new Error('the store\'s thread stopped before its database was open'))
    })
  })
  thread = await startRestartingWorker({ name: `SQLite ${name}`, log, start: spawn, onRestarted: async () => { waited() } })
  waited()

  const flush = (): void => {
    const ids = outgoing.map((r) => r.id)
    const worker = thread.current()
    if (worker === null) {
      outgoing = []
      fail(ids, 'the store\'s thread is starting again')
      return
    }
    worker.postMessage({ requests: outgoing } satisfies ToThread)
    outgoing = []
    // Judged after the answers that have reached this thread are read: a turn's timers run before
    // its messages, so a loop held past the deadline (a burst being parsed, a thread starved of the
    // CPU) would otherwise fail writes the store had committed and answered: an event stored, and
    // answered 503 (docs/performance.md, "A burst of events").
    setTimeout(() => {
      setImmediate(() => {
        if (!ids.some((id) => waiting.has(id))) return
        stalled = true
        fail(ids, `the store answered nothing within ${deadlineMs / 1000} s`)
      })
    }, deadlineMs).unref()
  }
  const send = (request: Omit<Request, 'id'>): Promise<unknown> => new Promise((resolve, reject) => {
    if (closing !== null) {
      reject(new SqliteThreadUnavailableError('the store is closed'))
      return
    }
    const worker = thread.current()
    if (worker === null) {
      reject(new SqliteThreadUnavailableError('the store\'s thread is starting again'))
      return
    }
    if (waiting.size === 0) worker.ref()
    const id = waiting.add(resolve, reject)
    if (outgoing.length === 0) setImmediate(flush)
    outgoing.push({ id, ...request } as Request)
  })
  const settled = (): Promise<void> => waiting.size === 0
    ? Promise.resolve()
    : new Promise((resolve) => { idle.push(resolve) })

  return {
    write: async (write) => await send({ write }),
    call: async (call, ...args) => await send({ call, args }) as never,
    ready: () => thread.current() !== null && !stalled,
    close () {
      closing ??= (async () => {
        thread.stop()
        // What was sent is answered (or fails with the thread); nothing new is taken.
        await settled()
        const worker = thread.current()
        if (worker === null) return
        const exited = new Promise((resolve) => worker.once('exit', resolve))
        worker.ref()
        worker.postMessage({ close: true } satisfies ToThread)
        await exited
      })()
      return closing
    },
  }
}
