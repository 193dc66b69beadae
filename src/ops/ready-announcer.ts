/**
 * The start log says what is true: `listening` once the port is open, and `ready to accept
 * requests` only once every enabled environment holds a token, as `/readyz` would say 200. A
 * proxy whose provider refuses its keys listens but is never announced ready; its token lines say why.
 */
import type { Logger } from 'pino'
import type { EnvironmentName } from '../config/config.js'
import type { TokenSource } from '../tokens/token-source.js'

export const READY_POLL_MS = 50

/** Logs the ready line once, when it becomes true; returns the function that stops waiting. */
export function announceWhenReady (
  sources: ReadonlyMap<EnvironmentName, TokenSource>,
  log: Logger,
  fields: Record<string, unknown>,
): () => void {
  const ready = (): boolean => [...sources.values()].every((source) => source.status().ready)
  const announce = (): void => { log.info(fields, 'payments-auth-proxy ready to accept requests') }
  if (ready()) {
    announce()
    return () => {}
  }
  const timer = setInterval(() => {
    if (!ready()) return
    clearInterval(timer)
    announce()
  }, READY_POLL_MS)
  timer.unref()
  return () => { clearInterval(timer) }
}
