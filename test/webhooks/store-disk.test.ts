/**
 * The SQLite store's disk full or read-only (SPEC §10, BAD_INPUTS "Webhook inbox"): the built sidecar
 * runs in a mount namespace of its own whose store directory is a small tmpfs, so the real SQLite
 * file meets a real ENOSPC: intake answers 503 `WEBHOOK_STORE_UNAVAILABLE` (the provider retries),
 * nothing answered 200 is lost, and once there is space again intake answers 200 with no restart.
 * A read-only volume is met at the start (Linux will not remount a file system read-only while a
 * file on it is open for writing): one line naming the variable, exit 1, nothing half started.
 * Needs root (or CAP_SYS_ADMIN) for `unshare -m` and `mount`: this machine's CI has them.
 */
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { CLI, run, type Child } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { inboxEnv, inboxPortOf, PATH_TOKEN, post, startApp, tempDir } from './inbox-harness.js'

// Its wait for every event answered 200 allows 90 s, more than tap's 60 s for a whole file.
t.setTimeout(300_000)

const canMount = ((): boolean => {
  try {
    execFileSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs /mnt'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

async function startOnTmpfs (t: Test, dir: string, env: Record<string, string>, size: string): Promise<{ child: Child, intakeUrl: string }> {
  const script = 'mount -t tmpfs -o "size=$STORE_SIZE" tmpfs "$STORE_DIR" && exec "$NODE" "$CLI_PATH"'
  const child = run(t, 'unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], { ...env, STORE_DIR: dir, STORE_SIZE: size, NODE: process.execPath, CLI_PATH: CLI, LOG_LEVEL: 'info' })
  return { child, intakeUrl: `http://127.0.0.1:${await inboxPortOf(child)}/webhooks/${PATH_TOKEN}` }
}

/** Runs `mount` inside the sidecar's own mount namespace (a tmpfs grows by a remount). */
function remount (child: Child, dir: string, options: string): void {
  execFileSync('nsenter', ['-t', String(child.process.pid), '-m', 'mount', '-o', `remount,${options}`, dir])
}

t.test('disk full: 503 to the provider, nothing answered 200 lost, intake back without a restart once there is space', { skip: canMount ? false : 'needs root for unshare -m and mount (CI has it)' }, async (t) => {
  const app = await startApp(t)
  const dir = tempDir(t)
  const { child, intakeUrl } = await startOnTmpfs(t, dir, inboxEnv(app.url, join(dir, 'webhooks.db')) as Record<string, string>, '400k')
  const answered = new Set<string>()
  const pad = 'x'.repeat(16 * 1024)
  let refused: Awaited<ReturnType<typeof post>> | null = null
  for (let n = 0; n < 200 && refused === null; n++) {
    const res = await post(intakeUrl, JSON.stringify({ id: `evt_${n}`, pad }))
    if (res.status === 200) answered.add(String(res.json['id']))
    else refused = res
  }
  t.ok(answered.size > 0, `${answered.size} events stored before the disk was full`)
  t.equal(refused?.status, 503, 'a full disk is 503, so the provider retries')
  t.same(refused?.json['error'], { code: 'WEBHOOK_STORE_UNAVAILABLE', message: 'The event could not be stored (the store cannot write); retry later' })
  t.notMatch(refused?.text ?? '', /SQLITE|ENOSPC|disk|webhooks\.db/i, 'the answer names no file or driver error')

  remount(child, dir, 'size=64m')
  const after = await post(intakeUrl, JSON.stringify({ id: 'evt_after_space', pad }))
  t.equal(after.status, 200, 'space back: stored again, no restart')
  answered.add(String(after.json['id']))

  await eventually(() => [...answered].every((id) => app.deliveries.some((d) => d.headers['webhook-id'] === id)), { what: 'every event answered 200 delivered', timeoutMs: 90_000 })
  t.pass(`all ${answered.size} events answered 200 were delivered`)
  t.match(child.stdout(), /webhook not stored/, 'the refusal is logged for the operator')
  t.notMatch(child.stdout() + child.stderr(), new RegExp(PATH_TOKEN), 'the path token is in no log line')
})

t.test('a read-only store volume stops the start with one line naming PROXY_WEBHOOK_STORE_PATH', { skip: canMount ? false : 'needs root for unshare -m and mount (CI has it)' }, async (t) => {
  const dir = tempDir(t)
  const script = 'mount -t tmpfs -o ro,size=64k tmpfs "$STORE_DIR" && exec "$NODE" "$CLI_PATH"'
  const child = run(t, 'unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], { ...inboxEnv('http://127.0.0.1:9/events', join(dir, 'webhooks.db')) as Record<string, string>, STORE_DIR: dir, NODE: process.execPath, CLI_PATH: CLI })
  t.same(await child.exited, { code: 1, signal: null })
  const lines = child.stderr().trim().split('\n')
  t.equal(lines.length, 1, `one line, no stack: ${child.stderr()}`)
  t.match(lines[0], new RegExp(`^payments-auth-proxy: the webhook store PROXY_WEBHOOK_STORE_PATH=${join(dir, 'webhooks.db')} cannot be opened \\(SQLITE_CANTOPEN: .*writable`))
  t.notMatch(child.stdout() + child.stderr(), new RegExp(PATH_TOKEN), 'the path token is in no line')
})
