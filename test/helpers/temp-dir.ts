/** A fresh directory under the system's temp dir for one test (a SQLite file, a strace log), removed at its teardown. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'

export function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'pap-test-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}
