/**
 * Calls made to a worker thread and answered in a later message, by id: the bookkeeping the SQLite
 * store's client and the webhook inbox's share. An error crosses the thread as a Failure (a
 * structured clone keeps neither its class nor its code reliably) and is made an Error again here.
 */

export interface Failure { message: string, code?: string }

/** One call's outcome, as the thread posts it back. */
export type Answer = { id: number, value: unknown } | { id: number, failure: Failure }

export function failureOf (err: unknown): Failure {
  if (!(err instanceof Error)) return { message: String(err) }
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' ? { message: err.message, code } : { message: err.message }
}

/** The error a failure stood for: its message, and its code (SQLITE_FULL, EACCES, …) where it had one. */
export function errorOf (failure: Failure): Error & { code?: string } {
  const err: Error & { code?: string } = new Error(failure.message)
  if (failure.code !== undefined) err.code = failure.code
  return err
}

interface Waiting { resolve: (value: unknown) => void, reject: (err: Error) => void }

/**
 * The calls sent and not yet answered. An answer for an id no longer waiting (failed past its
 * deadline, or when its thread stopped) is dropped: its caller was already told.
 */
export class WaitingCalls {
  readonly #waiting = new Map<number, Waiting>()
  #nextId = 0

  get size (): number {
    return this.#waiting.size
  }

  has (id: number): boolean {
    return this.#waiting.has(id)
  }

  /** The id of a new call, settled through `resolve` or `reject` when its answer comes. */
  add (resolve: (value: unknown) => void, reject: (err: Error) => void): number {
    const id = this.#nextId++
    this.#waiting.set(id, { resolve, reject })
    return id
  }

  answer (answer: Answer): void {
    const waiting = this.#waiting.get(answer.id)
    if (waiting === undefined) return
    this.#waiting.delete(answer.id)
    if ('failure' in answer) waiting.reject(errorOf(answer.failure))
    else waiting.resolve(answer.value)
  }

  /** Rejects the calls of `ids` still waiting (every call without `ids`) with `err`. */
  fail (err: Error, ids: Iterable<number> = [...this.#waiting.keys()]): void {
    for (const id of ids) {
      this.#waiting.get(id)?.reject(err)
      this.#waiting.delete(id)
    }
  }
}
