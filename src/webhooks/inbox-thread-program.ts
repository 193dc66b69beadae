/**
 * The whole webhook inbox (SPEC §10: its listener, store client and deliverer, buildInbox) served
 * from a thread of its own, which inbox-thread.ts starts. A provider's burst of events is parsed,
 * stored and delivered with this thread's event loop and this thread's heap: its garbage is
 * collected here, never in a pause of the loop that serves the proxy. The thread, and the store's
 * SQLite thread it starts, run at a lower scheduling priority than the proxy's (threads/
 * thread-priority.ts): when the machine is busy, the proxy's requests go first (docs/performance.md,
 * "28 Nov, last: the inbox in a thread of its own").
 *
 * Its log lines and its metrics' observations go to the main thread, so that stdout has one writer
 * and /metrics one registry; so does the news that events were stored (payments, SPEC §12, read
 * them). The main thread's reads of the store (the console, payments, readiness) are answered here.
 * What this loop produced crosses in one message at most every FLUSH_EVERY_MS.
 */
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads'
import type { Config } from '../config/config.js'
import type { WebhookConfig } from '../config/webhook-config.js'
import { systemClock } from '../clock.js'
import { createLogger } from '../logger.js'
import { proxyIdleMs } from '../ops/proxy-activity.js'
import { OperatorError } from '../operator-error.js'
import { failureOf, type Answer } from '../threads/thread-calls.js'
import { lowerThreadPriority } from '../threads/thread-priority.js'
import { buildInbox, INTAKE_BACKLOG, type Inbox } from './inbox-server.js'
import { createIntakePacer, pacingPolicy, type IntakePacer } from './intake-pacing.js'
import { recordingObserver, type FromInbox, type Observation, type StoreCall, type ToInbox } from './inbox-thread-messages.js'

/** The module the inbox's thread runs. */
export const INBOX_THREAD = import.meta.url

export interface InboxThreadData {
  thread: string
  settings: WebhookConfig
  state: Config['state']
  logLevel: string
  /**
   * When the proxy last forwarded a request (ops/proxy-activity.ts): intake and deliveries are paced while it is busy.
   */
  proxyActivity?: SharedArrayBuffer | undefined
}

const FLUSH_EVERY_MS = 5

/** A thread whose loop still holds a handle after closing (a lingering socket) ends all the same. */
const EXIT_AFTER_CLOSE_MS = 1_000

async function serveInbox (port: MessagePort, data: InboxThreadData): Promise<void> {
  const send = (message: FromInbox): void => { port.postMessage(message) }
  let lines = ''
  let observed: Observation[] = []
  let stored = false
  let answers: Answer[] = []
  let scheduled = false
  const flush = (): void => {
    scheduled = false
    if (lines === '' && observed.length === 0 && !stored && answers.length === 0) return
    send({ turn: { lines, observed, stored, answers } })
    lines = ''
    observed = []
    stored = false
    answers = []
  }
  // At most one message every FLUSH_EVERY_MS: a saturated inbox turns its loop thousands of times a
  // second, and each message is a wake-up of the proxy's loop.
  const later = (): void => {
    if (scheduled) return
    scheduled = true
    setTimeout(flush, FLUSH_EVERY_MS)
  }
  const log = createLogger(data.logLevel, { write (line: string) { lines += line; later() } })
  const observer = recordingObserver((o) => { observed.push(o); later() })
  // Before the store's SQLite thread is started from here: it inherits this thread's priority.
  const priority = lowerThreadPriority()
  if ('failed' in priority) log.warn({ err: priority.failed }, 'the webhook inbox thread\'s priority could not be lowered: it competes with the proxy for the CPU as an equal')
  else log.debug(priority, 'webhook inbox thread started')

  let inbox: Inbox
  try {
    inbox = await buildInbox(data.settings, data.state, {
      logger: log,
      observer,
      pacers: pacersOf(data),
      onStored () { stored = true; later() },
    })
  } catch (err) {
    flush()
    send({ buildFailed: failureOf(err), operator: err instanceof OperatorError })
    port.close()
    return
  }
  const answer = (call: StoreCall): void => {
    read(inbox, call).then(
      (value) => { answers.push({ id: call.id, value }) },
      (err: unknown) => { answers.push({ id: call.id, failure: failureOf(err) }) },
    )
      .finally(later).catch(() => {})
  }
  port.on('message', (message: ToInbox) => {
    if ('calls' in message) for (const call of message.calls) answer(call)
    else if ('wake' in message) inbox.deliverer.wake()
    else if ('listen' in message) {
      inbox.app.listen({ ...message.listen, backlog: INTAKE_BACKLOG }).then(() => {
        const address = inbox.app.server.address()
        send({ listening: typeof address === 'object' && address !== null ? address.port : message.listen.port })
      }, (err: unknown) => { send({ listenFailed: failureOf(err) }) })
    } else if ('cut' in message) inbox.app.server.closeAllConnections()
    else {
      // Intakes in progress are stored and answered, deliveries stopped, the store closed; then the thread ends.
      inbox.app.close().catch((err: unknown) => { log.error({ err }, 'webhook inbox did not close cleanly') }).finally(() => {
        flush()
        port.close()
        setTimeout(() => { process.exit(0) }, EXIT_AFTER_CLOSE_MS).unref()
      }).catch(() => {})
    }
  })
  send({ built: true })
}

/** Intake and deliveries paced apart, at the same rate each, while the proxy is busy. */
function pacersOf (
  { proxyActivity, settings }: InboxThreadData,
): { intake: IntakePacer, delivery: IntakePacer } | undefined {
  if (proxyActivity === undefined || settings.rateWhileProxying === 0) return undefined
  const policy = pacingPolicy(settings.rateWhileProxying)
  const idleMs = proxyIdleMs(proxyActivity, systemClock)
  const nowMs = (): number => systemClock.monotonicMs()
  return { intake: createIntakePacer(policy, idleMs, nowMs), delivery: createIntakePacer(policy, idleMs, nowMs) }
}

async function read (inbox: Inbox, { call, args }: StoreCall): Promise<unknown> {
  const { store } = inbox
  switch (call) {
    case 'list': return await store.list(...(args as Parameters<typeof store.list>))
    case 'show': return await store.show(...(args as Parameters<typeof store.show>))
    case 'replay': return await store.replay(...(args as Parameters<typeof store.replay>))
    case 'stats': return await store.stats()
    case 'eventsAfter': return await store.eventsAfter(...(args as Parameters<typeof store.eventsAfter>))
    case 'lastEventSeq': return await store.lastEventSeq()
    case 'readiness': return await inbox.readiness()
  }
}

if (
  !isMainThread &&
  parentPort !== null &&
  (workerData as Partial<InboxThreadData> | null)?.thread === INBOX_THREAD
) await serveInbox(parentPort, workerData as InboxThreadData)
