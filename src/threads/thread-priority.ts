/**
 * Lowers the calling thread's scheduling priority by NICE_STEP, so that when it and the proxy's
 * thread want the CPU at once, the proxy's requests go first (docs/performance.md, "28 Nov, last").
 * On Linux a thread's nice value is its own (setpriority with its thread id) and raising one's own
 * needs no privilege, and a thread started by a lowered one inherits its value. Where the thread id
 * cannot be read (another system), nothing changes.
 */
import { readlinkSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { getPriority, setPriority } from 'node:os'

export const NICE_STEP = 10
const LOWEST = 19

/** The outcome, for the caller to log: lowered to a nice value, not available here, or the error. */
export type PriorityOutcome = { nice: number } | { unsupported: true } | { failed: Error }

/**
 * libuv's pool threads (file system, DNS) are shared by every thread of the process and started by
 * the first request of any of them, inheriting that thread's priority: called on the main thread
 * before a lowered thread starts, so the proxy's file and DNS work never runs at the lower one.
 */
export async function startSharedPool (): Promise<void> {
  await stat('/')
}

export function lowerThreadPriority (): PriorityOutcome {
  let threadId: number
  try {
    // `/proc/thread-self` links to `<pid>/task/<tid>`.
    threadId = Number(readlinkSync('/proc/thread-self').split('/').at(-1))
  } catch {
    return { unsupported: true }
  }
  if (!Number.isSafeInteger(threadId) || threadId <= 0) return { unsupported: true }
  try {
    const nice = Math.min(LOWEST, getPriority(threadId) + NICE_STEP)
    setPriority(threadId, nice)
    return { nice }
  } catch (err) {
    return { failed: err as Error }
  }
}
