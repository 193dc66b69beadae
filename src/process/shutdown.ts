/**
 * SIGTERM and SIGINT (and an uncaught error, from here on): in-flight requests get the grace
 * period, whatever is still open after it is cut, then every store closes. close-with-grace logs
 * an uncaught error and drains before exiting.
 */
import closeWithGrace from 'close-with-grace'
import type { Logger } from 'pino'
import { fatal } from './exit.js'

export interface Shutdown {
  graceS: number
  log: Logger
  /** Stops what watches and announces, before the drain. */
  stop: () => void
  /** Cuts the connections still open once the grace period is over. */
  cut: () => void
  closeAll: () => Promise<void>
}

export function drainOnSignal (shutdown: Shutdown): void {
  const { graceS, log } = shutdown
  const graceMs = graceS * 1000
  process.off('uncaughtException', fatal)
  process.off('unhandledRejection', fatal)
  closeWithGrace({ delay: graceMs + 2_000, skip: ['SIGHUP'], logger: { error: (m: unknown) => log.error({ detail: String(m) }, 'shutdown') } }, async ({ signal, err }) => {
    if (err !== undefined) log.error({ err }, 'fatal error; shutting down')
    log.info({ signal, graceSeconds: graceS }, 'shutting down: draining in-flight requests')
    shutdown.stop()
    const cut = setTimeout(shutdown.cut, graceMs)
    await shutdown.closeAll()
    clearTimeout(cut)
    log.info('stopped')
  })
}
