/**
 * A background loop's passes (the approvals', the payments', each outbox's deliveries): one at a
 * time, a call during one asking for one more after it, never a pile of them; each counted as it
 * ends (ops/worker-passes.ts counts them as `worker_passes_total`), a failure logged.
 */
import type { Logger } from 'pino'

export type PassOutcome = 'done' | 'failed'

export interface SerialPasses {
  /** A pass now; while one runs, one more after it, never a pile of them. */
  run: () => void
  /** Resolves once the pass under way (if any) has ended. */
  idle: () => Promise<void>
}

export interface SerialPassesOptions {
  /** Once true, no pass starts. */
  stopped: () => boolean
  counted: (outcome: PassOutcome) => void
  log: Logger
  /**
   * Logged at error when a pass fails: once per outage when `recovered` is given (logged at info when one succeeds
   * again), else at each failure.
   */
  failed: string
  recovered?: string
}

export function serialPasses (pass: () => Promise<void>, options: SerialPassesOptions): SerialPasses {
  const { stopped, counted, log, failed, recovered } = options
  let running: Promise<void> | null = null
  let again = false
  let failing = false
  function run (): void {
    if (stopped()) return
    if (running !== null) { again = true; return }
    running = pass()
      .then(() => {
        counted('done')
        if (failing && recovered !== undefined) log.info(recovered)
        failing = false
      }, (err: unknown) => {
        counted('failed')
        if (!failing || recovered === undefined) log.error({ err }, failed)
        failing = true
      })
      .finally(() => {
        running = null
        if (again) { again = false; run() }
      })
  }
  return { run, idle: async () => { await running } }
}
