/**
 * What the SQLite store syncs (SPEC §10: 200 only after a synced commit), read from the system calls
 * of a real process under strace: an intake's commit reaches the disk before the intake resolves; a
 * recorded attempt alone does not wait for the disk (a crash of the process keeps it; a power loss
 * may deliver that event once more). The store runs as built (dist/), the code the sidecar runs; its
 * commits are made by the store's own thread, which strace follows (-f).
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tempDir } from '../helpers/temp-dir.js'

const STORE_MODULE = fileURLToPath(new URL('../../dist/outbox/sqlite-store.js', import.meta.url))

/** Each step between two markers written to stdout, so strace's log says which syncs belong to it. */
const PROBE = `
import { writeSync } from 'node:fs'
const { createSqliteStore } = await import(process.argv[2])
const log = { error () {}, info () {} }
const store = await createSqliteStore({ path: process.argv[3], log, retentionMs: 86400000, maxEvents: 100, maxBytes: 1048576, orderMaxWaitMs: 900000 })
const mark = (name) => writeSync(1, 'mark:' + name + '\\n')
let n = 0
const event = () => ({ key: 'id:e' + n, bodySha256: 'h' + n, orderKey: null, body: Buffer.from('{"n":' + n++ + '}'), headers: [], source: '127.0.0.1', receivedAtMs: 1000 })
mark('intake'); const first = await store.intake(event()); mark('end')
await store.claimDue(2000, 10, 60000)
mark('settle'); await store.settle(first.id, { atMs: 2000, status: 200, error: null, durationMs: 1 }, { status: 'delivered' }); mark('end')
mark('intake-after-settle'); await store.intake(event()); mark('end')
mark('close'); await store.close()
`

function syncsPerStep (log: string): Map<string, number> {
  const steps = new Map<string, number>()
  let current: string | null = null
  for (const line of log.split('\n')) {
    const marker = /write\(1, "mark:([a-z-]+)\\n"/.exec(line)
    if (marker !== null) {
      current = marker[1] === 'end' ? null : (marker[1] ?? null)
      if (current !== null) steps.set(current, 0)
    } else if (current !== null && /^\d+\s+f(data)?sync\(/.test(line)) {
      steps.set(current, (steps.get(current) ?? 0) + 1)
    }
  }
  return steps
}

t.test('an intake waits for the disk; a recorded attempt does not, and the next intake syncs it with its own', async (t) => {
  const dir = tempDir(t)
  const log = join(dir, 'strace.log')
  // A file, not -e: the store's thread is started with this process's options, and --input-type is for -e alone.
  const probe = join(dir, 'probe.mjs')
  writeFileSync(probe, PROBE)
  execFileSync('strace', ['-f', '-e', 'trace=fsync,fdatasync,write', '-o', log, process.execPath, probe, STORE_MODULE, join(dir, 'webhooks.db')], { stdio: 'ignore' })
  const steps = syncsPerStep(readFileSync(log, 'utf8'))
  t.same([...steps.keys()], ['intake', 'settle', 'intake-after-settle', 'close'], 'every step ran under strace')
  t.ok((steps.get('intake') ?? 0) >= 1, `the intake's commit was synced before it resolved (${steps.get('intake')} syncs)`)
  t.equal(steps.get('settle'), 0, 'recording an attempt alone syncs nothing')
  t.ok((steps.get('intake-after-settle') ?? 0) >= 1, 'the next intake syncs again')
})
