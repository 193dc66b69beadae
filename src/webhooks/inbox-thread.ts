/**
 * The webhook inbox (SPEC §10) as the sidecar runs it: whole, in a thread of its own
 * (inbox-thread-program.ts), with its own event loop and its own heap. At a few thousand events a
 * second the inbox makes garbage faster than anything else in the sidecar; collected on the proxy's
 * heap, its pauses were the proxy's tail (docs/performance.md, "28 Nov, last: the inbox in a thread
 * of its own").
 *
 * This side writes the thread's log lines with the sidecar's own, counts its observations on the
 * proxy's /metrics, wakes payments (SPEC §12) when events were stored, and gives the console and
 * payments the store's reads they need (`InboxStoreView`), answered by the thread.
 *
 * A thread that stops unexpectedly is logged and started again (threads/restarting-worker.ts),
 * listening where it listened: meanwhile connections are refused and reads fail, so a provider
 * retries (never a 200 for an event not stored) and the console shows an error.
 */
import { Worker } from 'node:worker_threads'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import { systemClock } from '../clock.js'
import type { Config } from '../config/config.js'
import type { WebhookConfig } from '../config/webhook-config.js'
import { OperatorError } from '../operator-error.js'
import { METRIC_PREFIX } from '../ops/metrics.js'
import type { OutboxStore, SequencedEvent, StoredEvent } from '../outbox/outbox-store.js'
import { startRestartingWorker, type RestartingWorker } from '../threads/restarting-worker.js'
import { errorOf, WaitingCalls, type Failure } from '../threads/thread-calls.js'
import { startSharedPool } from '../threads/thread-priority.js'
import { createInboxMetrics, noInboxObserver } from './inbox-metrics.js'
import type { WebhooksReadiness } from './inbox-server.js'
import { replay, type FromInbox, type StoreCall, type StoreRead, type ToInbox } from './inbox-thread-messages.js'
import { INBOX_THREAD, type InboxThreadData } from './inbox-thread-program.js'

const THREAD_NAME = 'webhook inbox'

/** What the main thread reads of the inbox's store: the console's pages and payments' event feed. */
export type InboxStoreView = Pick<OutboxStore, 'list' | 'show' | 'replay' | 'stats' | 'eventsAfter' | 'lastEventSeq'>

export interface InboxThreadDeps {
  logger: Logger
  logLevel: string
  /** Where the thread's log lines are written: the destination of the sidecar's own. */
  lines: { write: (text: string) => unknown }
  /** The proxy's metrics registry, so /metrics on the proxy listener shows the inbox too. */
  registry?: Registry
  /** Told when events were stored (payments then read the store). */
  onStored?: (() => void) | undefined
  /**
   * The proxy's ProxyActivity buffer (ops/proxy-activity.ts): the thread paces intake and deliveries while the proxy is
   * busy.
   */
  proxyActivity?: SharedArrayBuffer | undefined
}

export interface ThreadedInbox {
  store: InboxStoreView
  deliverer: { wake: () => void }
  readiness: () => Promise<WebhooksReadiness>
  /** Opens the inbox's listener; resolves with its port, rejects with the listen error (its code kept). */
  listen: (host: string, port: number) => Promise<number>
  /** The grace period is over: connections still open are closed. */
  closeAllConnections: () => void
  /** Intakes in progress are stored and answered, the listener closed, deliveries stopped and the store closed. */
  close: () => Promise<void>
}

/**
 * Resolves once the thread's store is open and its listener built; rejects as that failed (an OperatorError stays one).
 */
export async function startInboxThread (settings: WebhookConfig, state: Config['state'], deps: InboxThreadDeps): Promise<ThreadedInbox> {
  const log = deps.logger.child({ component: 'webhooks' })
  const waiting = new WaitingCalls()
  let calls: StoreCall[] = []
  let listenAt: { host: string, port: number } | null = null
  let closing: Promise<void> | null = null
  let thread: RestartingWorker | null = null
  const failWaiting = (): void => {
    waiting.fail(new Error('the webhook inbox thread stopped; it is being started again'))
  }
  const call = (name: StoreRead, args: unknown[]): Promise<unknown> => new Promise((resolve, reject) => {
    const worker = thread?.current() ?? null
    if (worker === null) {
      reject(new Error('the webhook inbox thread is not running; it is being started again'))
      return
    }
    const id = waiting.add(resolve, reject)
    if (calls.length === 0) {
      setImmediate(() => {
        thread?.current()?.postMessage({ calls } satisfies ToInbox)
        calls = []
      })
    }
    calls.push({ id, call: name, args })
  })
  const store = storeView(call)
  const observer = deps.registry === undefined
    ? noInboxObserver
    : createInboxMetrics(deps.registry, METRIC_PREFIX, () => store.stats(), () => systemClock.wallMs())
  const onTurn = (turn: Extract<FromInbox, { turn: unknown }>['turn']): void => {
    if (turn.lines !== '') deps.lines.write(turn.lines)
    replay(observer, turn.observed)
    for (const answer of turn.answers) waiting.answer(answer)
    if (turn.stored) deps.onStored?.()
  }

  await startSharedPool()
  thread = await startRestartingWorker({
    name: THREAD_NAME,
    log,
    start: () => spawnInbox(
      { thread: INBOX_THREAD, settings, state, logLevel: deps.logLevel, proxyActivity: deps.proxyActivity },
      onTurn,
      log,
    ),
    onStopped: failWaiting,
    onRestarted: async (worker) => {
      if (listenAt !== null) log.info({ port: await openListener(worker, listenAt.host, listenAt.port), path: '/webhooks/<redacted>' }, 'webhook inbox ready to accept events')
    },
  })
  const running = thread
  return {
    store,
    deliverer: { wake () { running.current()?.postMessage({ wake: true } satisfies ToInbox) } },
    readiness: async () => await call('readiness', []) as WebhooksReadiness,
    async listen (host, port) {
      const worker = running.current()
      if (worker === null) throw new Error('the webhook inbox thread is being started again')
      const bound = await openListener(worker, host, port)
      listenAt = { host, port }
      return bound
    },
    closeAllConnections () { running.current()?.postMessage({ cut: true } satisfies ToInbox) },
    close () {
      closing ??= (async () => {
        running.stop()
        const worker = running.current()
        if (worker === null) return
        const exited = new Promise((resolve) => worker.once('exit', resolve))
        worker.postMessage({ close: true } satisfies ToInbox)
        await exited
        failWaiting()
      })()
      return closing
    },
  }
}

/** The store's reads, answered by the thread: a body crosses as a Uint8Array and is a Buffer again here. */
function storeView (call: (name: StoreRead, args: unknown[]) => Promise<unknown>): InboxStoreView {
  return {
    list: async (query) => await call('list', [query]) as Awaited<ReturnType<OutboxStore['list']>>,
    async show (id) {
      const shown = await call('show', [id]) as Awaited<ReturnType<OutboxStore['show']>>
      return shown === null ? null : { ...shown, event: withBuffer(shown.event) }
    },
    replay: async (selection, nowMs) => await call('replay', [selection, nowMs]) as string[],
    stats: async () => await call('stats', []) as Awaited<ReturnType<OutboxStore['stats']>>,
    eventsAfter: async (seq, limit) => (await call('eventsAfter', [seq, limit]) as SequencedEvent[]).map(withBuffer),
    lastEventSeq: async () => await call('lastEventSeq', []) as number,
  }
}

function withBuffer<T extends StoredEvent | SequencedEvent> (event: T): T {
  const body: Uint8Array = event.body
  return { ...event, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) }
}

/** Starts the inbox's thread; resolves once its store is open and its listener built. */
function spawnInbox (data: InboxThreadData, onTurn: (turn: Extract<FromInbox, { turn: unknown }>['turn']) => void, log: Logger): Promise<Worker> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(INBOX_THREAD), { workerData: data, name: THREAD_NAME })
    let built = false
    worker.on('message', (message: FromInbox) => {
      if ('turn' in message) onTurn(message.turn)
      else if ('built' in message) {
        built = true
        resolve(worker)
      } else if ('buildFailed' in message) reject(message.operator ? new OperatorError(message.buildFailed.message) : errorOf(message.buildFailed))
      else listenerAnswer(worker, message)
    })
    worker.on('error', (err) => {
      if (built) log.error({ err }, 'webhook inbox thread failed')
      else reject(err)
    })
    worker.on('exit', () => {
      listenerAnswer(worker, { listenFailed: { message: 'the webhook inbox thread stopped' } })
      if (!built) reject(new Error('the webhook inbox thread stopped before its listener was built'))
    })
  })
}

/** A listener being opened, per worker: its answer settles it. */
const opening = new WeakMap<Worker, { resolve: (port: number) => void, reject: (err: Error) => void }>()

function openListener (worker: Worker, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    opening.set(worker, { resolve, reject })
    worker.postMessage({ listen: { host, port } } satisfies ToInbox)
  })
}

function listenerAnswer (worker: Worker, message: { listening: number } | { listenFailed: Failure }): void {
  const waiting = opening.get(worker)
  if (waiting === undefined) return
  opening.delete(worker)
  if ('listening' in message) waiting.resolve(message.listening)
  else waiting.reject(errorOf(message.listenFailed))
}
