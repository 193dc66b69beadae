/**
 * What a SQLite thread (sqlite-thread.ts) and the thread that started it say to each other. Every
 * message is structured-cloned, so errors cross as their message and code (an `Error` subclass
 * would arrive as a plain one; threads/thread-calls.ts), and a Buffer arrives as a Uint8Array.
 */
import type { Answer, Failure } from '../threads/thread-calls.js'

/** One write (grouped with the others of its turn into one transaction) or one call by name. */
export type Request =
  | { id: number, write: unknown }
  | { id: number, call: string, args: unknown[] }

/** To the thread: the requests made in one turn of the caller's event loop, or the end. */
export type ToThread = { requests: Request[] } | { close: true }

/** From the thread: its database is open (or could not be), or the answers of one of its turns. */
export type FromThread = { opened: true } | { openFailed: Failure } | { answers: Answer[] }
