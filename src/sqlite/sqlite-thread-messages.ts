/**
 * What a SQLite thread (sqlite-thread.ts) and the thread that started it say to each other. Every
 * message is structured-cloned, so errors cross as their message and code (an `Error` subclass
 * would arrive as a plain one), and a Buffer arrives as a Uint8Array.
 */

/** One write (grouped with the others of its turn into one transaction) or one call by name. */
export type Request =
  | { id: number, write: unknown }
  | { id: number, call: string, args: unknown[] }

/** To the thread: the requests made in one turn of the caller's event loop, or the end. */
export type ToThread = { requests: Request[] } | { close: true }

export interface Failure { message: string, code?: string }

export type Answer = { id: number, value: unknown } | { id: number, failure: Failure }

/** From the thread: its database is open (or could not be), or the answers of one of its turns. */
export type FromThread = { opened: true } | { openFailed: Failure } | { answers: Answer[] }

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
