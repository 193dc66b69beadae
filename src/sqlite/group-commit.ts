/**
 * Group commit: intakes that arrive together share one transaction, so one sync covers many events
 * (one fdatasync tops out near 4,300 events/s alone). The batch is cut by `setImmediate`, not by a
 * timer: an intake waits only for the events already queued in the same turn of the event loop, and
 * each is answered after the commit that holds it.
 */

/** Runs one batch in one transaction and returns one result per item, or throws for the whole batch. */
export type BatchRunner<T, R> = (items: readonly T[]) => R[]

export interface GroupCommit<T, R> {
  submit: (item: T) => Promise<R>
  /** Resolves once every submitted item is answered. */
  drain: () => Promise<void>
}

interface Waiting<T, R> { item: T, resolve: (r: R) => void, reject: (e: unknown) => void }

export function createGroupCommit<T, R> (run: BatchRunner<T, R>, maxBatch = 512): GroupCommit<T, R> {
  let queue: Array<Waiting<T, R>> = []
  let scheduled = false
  let idle: Array<() => void> = []

  const flush = (): void => {
    scheduled = false
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch)
      queue = queue.slice(batch.length)
      let results: R[]
      try {
        results = run(batch.map((w) => w.item))
      } catch (err) {
        for (const w of batch) w.reject(err)
        continue
      }
      batch.forEach((w, i) => { w.resolve(results[i] as R) })
    }
    for (const done of idle) done()
    idle = []
  }

  return {
    submit (item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject })
        if (!scheduled) {
          scheduled = true
          setImmediate(flush)
        }
      })
    },
    drain () {
      if (!scheduled) return Promise.resolve()
      return new Promise<void>((resolve) => { idle.push(resolve) })
    },
  }
}
