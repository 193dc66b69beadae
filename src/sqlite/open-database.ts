/**
 * Opens a SQLite file for a durable store (the webhook inbox, SPEC §10; approvals, SPEC §11): WAL,
 * so readers and the operator commands never block writers, and `synchronous=FULL`, so a commit is
 * synced before the store answers (power loss included). Each store then creates its own tables.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type Database from 'better-sqlite3'

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
 * better-sqlite3 12 wraps its objects in Node's ObjectWrap, whose destructor aborts the process on
 * Node 24 when the garbage collector frees a statement at the wrong moment (Assertion failed: (env)
 * != nullptr; WiseLibs/better-sqlite3#1515, closed without a fix; seen here in the delivery tests on
 * Node 24). 13 uses Node-API, but needs Node 22 and crashes on 20. So each Node gets the one that
 * works on it; both are dependencies, external to the bundle, loaded only when a store is opened.
 */
async function loadDriver (): Promise<typeof Database> {
  const major = Number(process.versions.node.split('.')[0])
  return major >= 22 ? (await import('better-sqlite3-13')).default : (await import('better-sqlite3')).default
}
