/**
 * A worker thread that is started again when it stops without being asked to (an uncaught error, a
 * crash of what it runs): after 100 ms, then after twice as long each time it fails again, up to 5 s,
 * every stop and every failed start logged as an error, the start that works at info. The SQLite
 * threads (sqlite/sqlite-thread.ts) are kept running this way; what a stop means for their callers
 * (requests failed) is theirs to say in `onStopped`.
 */
import type { Worker } from 'node:worker_threads'
import type { Logger } from 'pino'

export const FIRST_RESTART_MS = 100
export const LAST_RESTART_MS = 5_000

export interface RestartingWorkerOptions {
  /** Names the thread in log lines. */
  name: string
  log: Logger
  /** Creates a worker and wires its messages; resolves once it serves, rejects when it cannot. */
  start: () => Promise<Worker>
  /** The worker stopped unexpectedly (before it is started again). */
  onStopped?: () => void
  /** A worker started again serves: what the first one was told after its start is told again (a listener opened). */
  onRestarted?: (worker: Worker) => Promise<void>
}

export interface RestartingWorker {
  /** The worker serving now; null while it is started again. */
  current: () => Worker | null
  /** From now on the worker's exit is its end: it is not started again. */
  stop: () => void
}

/** Rejects as the first start does: a worker that cannot start at all is not retried. */
export async function startRestartingWorker (options: RestartingWorkerOptions): Promise<RestartingWorker> {
  const { log, name } = options
  let current: Worker | null = null
  let stopped = false
  let restartMs = FIRST_RESTART_MS

  const watch = (worker: Worker): void => {
    current = worker
    worker.once('exit', (code) => {
      if (current === worker) current = null
      if (stopped) return
      options.onStopped?.()
      log.error({ thread: name, exitCode: code, restartInMs: restartMs }, 'thread stopped: starting it again')
      restartLater()
    })
  }
  const restartLater = (): void => {
    const wait = restartMs
    restartMs = Math.min(restartMs * 2, LAST_RESTART_MS)
    setTimeout(() => {
      if (stopped) return
      options.start().then(async (worker) => {
        try {
          await options.onRestarted?.(worker)
        } catch (err) {
          await worker.terminate()
          throw err
        }
        if (stopped) {
          await worker.terminate()
          return
        }
        watch(worker)
        restartMs = FIRST_RESTART_MS
        log.info({ thread: name }, 'thread started again')
      }).catch((err: unknown) => {
        log.error({ err, thread: name, restartInMs: restartMs }, 'thread could not be started again')
        restartLater()
      })
    }, wait).unref()
  }

  watch(await options.start())
  return {
    current: () => current,
    stop () { stopped = true },
  }
}
