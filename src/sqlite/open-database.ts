/**
 * Opens a SQLite file for a durable store (the webhook inbox, SPEC §10; approvals, SPEC §11): WAL,
 * so readers and the operator commands never block writers, and `synchronous=FULL`, so a commit is
 * synced before the store answers (power loss included). Each store then creates its own tables.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type Database from 'better-sqlite3'
import { OperatorError } from '../operator-error.js'
import { unsupportedNode } from '../supported-node.js'

/** Another process (an operator command) may hold the write lock briefly: wait rather than fail. */
const BUSY_TIMEOUT_MS = 2000

export async function openDatabase (path: string): Promise<Database.Database> {
  const Driver = await loadDriver()
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Driver(path)
  // exec, not pragma(): no statement object is left for the garbage collector.
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;`)
  return db
}

/**
 * better-sqlite3 13 (Node-API, prebuilt for Linux x64 and arm64), external to the bundle and loaded
 * only when a store is opened. It crashes on Node 20, so an older Node is refused here in words
 * rather than by a segmentation fault (12, which ran on Node 20, aborted on Node 24 in the garbage
 * collector: WiseLibs/better-sqlite3#1515).
 */
async function loadDriver (): Promise<typeof Database> {
  const unsupported = unsupportedNode(process.versions.node)
  if (unsupported !== null) throw new OperatorError(`the SQLite store cannot be opened: ${unsupported}`)
  return (await import('better-sqlite3')).default
}
