/**
 * What `check` can tell of an SQLite store's path (PROXY_WEBHOOK_STORE_PATH, the inbox's and the
 * approvals' file) before the sidecar opens it: whether its start could. Writability is tried, not
 * asked: access(2) says yes to root for a directory where no file can be created (/proc, a
 * read-only mount), so a file is created in the directory and removed at once. The store itself is
 * never created or changed; an existing file is opened for writing and closed.
 */
import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, openSync, statSync, unlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'

export type StorePath =
  /** A file that can be written, in a directory that takes new files (SQLite's -wal and -shm). */
  | { kind: 'file' }
  /** Not there yet: the start creates it (and the directories up to it) from `dir`. */
  | { kind: 'creatable', dir: string }
  /** Why the start could not open it. */
  | { kind: 'refused', problem: string }

export function judgeStorePath (path: string): StorePath {
  if (!existsSync(path)) {
    const dir = nearestExisting(dirname(path))
    if (!statSync(dir).isDirectory()) return { kind: 'refused', problem: `${path} cannot be created: ${dir} is not a directory` }
    const refused = refusesNewFiles(dir)
    if (refused !== null) return { kind: 'refused', problem: `${path} cannot be created: ${dir} does not take new files (${refused})` }
    return { kind: 'creatable', dir }
  }
  const stat = statSync(path)
  if (stat.isDirectory()) return { kind: 'refused', problem: `${path} is a directory, not a database file` }
  if (!stat.isFile()) return { kind: 'refused', problem: `${path} is not a regular file` }
  try {
    closeSync(openSync(path, 'r+'))
  } catch (err) {
    return { kind: 'refused', problem: `${path} cannot be written (${codeOf(err)})` }
  }
  const refused = refusesNewFiles(dirname(path))
  if (refused !== null) return { kind: 'refused', problem: `${dirname(path)} does not take new files (${refused}), and SQLite keeps its -wal and -shm files beside ${path}` }
  return { kind: 'file' }
}

function nearestExisting (dir: string): string {
  return existsSync(dir) || dirname(dir) === dir ? dir : nearestExisting(dirname(dir))
}

/** null when a new file can be created in `dir` (it is, and removed), else the error's code. */
function refusesNewFiles (dir: string): string | null {
  const probe = join(dir, `.payments-auth-proxy-check-${process.pid}-${randomBytes(4).toString('hex')}`)
  try {
    closeSync(openSync(probe, 'wx'))
  } catch (err) {
    return codeOf(err)
  }
  unlinkSync(probe)
  return null
}

function codeOf (err: unknown): string {
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' ? code : 'error'
}
