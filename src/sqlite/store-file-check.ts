/**
 * `check` of an embedded store's file (SPEC §6): one that is not there yet is created by the
 * sidecar at its start, so only its directory must take writes; one that is there must open as
 * SQLite and, with its directory (SQLite writes its -wal and -shm files beside it), be writable.
 * Nothing is written and no file is created, so check run beside a live sidecar leaves it alone.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import type Database from 'better-sqlite3'

export interface StoreFileCheck { ok: boolean, line: string }

/**
 * `label` names the store in the line (`payments store`); `describe` says what the file holds, from an open connection.
 */
export async function checkStoreFile (
  path: string,
  label: string,
  describe: (db: Database.Database) => string,
): Promise<StoreFileCheck> {
  if (!existsSync(path)) {
    const dir = nearestExisting(dirname(path))
    if (!statSync(dir).isDirectory() || !writable(dir)) return { ok: false, line: `FAIL  ${label}: ${path} cannot be created: ${dir} is not a writable directory (PROXY_WEBHOOK_STORE_PATH)` }
    return { ok: true, line: `ok    ${label}: ${path} is created at the sidecar's start (${dir} is writable)` }
  }
  if (!writable(path) || !writable(dirname(path))) return { ok: false, line: `FAIL  ${label}: ${path} or its directory is not writable (PROXY_WEBHOOK_STORE_PATH)` }
  try {
    const { openDatabase } = await import('./open-database.js')
    const db = await openDatabase(path)
    try {
      return { ok: true, line: `ok    ${label}: ${path} opens, ${describe(db)}` }
    } finally {
      db.close()
    }
  } catch (err) {
    return { ok: false, line: `FAIL  ${label}: ${path} cannot be read as an SQLite database (${(err as { code?: string }).code ?? 'error'}; PROXY_WEBHOOK_STORE_PATH)` }
  }
}

function nearestExisting (dir: string): string {
  return existsSync(dir) || dirname(dir) === dir ? dir : nearestExisting(dirname(dir))
}

function writable (path: string): boolean {
  try {
    accessSync(path, constants.W_OK)
    return true
  } catch {
    return false
  }
}
