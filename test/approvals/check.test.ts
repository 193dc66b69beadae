/**
 * `payments-auth-proxy check` with approvals (SPEC §6, §11), on the built CLI: when a caller uses
 * approveAbove it reports the approvals' store (the embedded file, or Redis) and what would stop the
 * start, exits 1 on a problem, never creates the file, and never prints the Redis URL.
 */
import t from 'tap'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { checkApprovals } from '../../src/approvals/check-approvals.js'
import { createStorage } from '../../src/storage/storage.js'
import { readCallersFile, type CallerSpec } from '../../src/callers/callers-file.js'
import { loadConfig } from '../../src/load-config.js'
import { runCli } from '../helpers/child-proxy.js'
import { captureLogger, providerEnv, startProvider } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { SEALING_SECRET, SIGNING_SECRET, approvalsCallersFile, pay, startApprovalsRig, tempDir } from './approvals-harness.js'

async function check (t: Parameters<typeof runCli>[0], env: Record<string, string | undefined>): Promise<{ code: number | null, out: string }> {
  const child = runCli(t, ['check'], env)
  const { code } = await child.exited
  return { code, out: child.stdout() + child.stderr() }
}

t.test('embedded store: a file not there yet is reported and not created; beside a running sidecar, its pending approvals are counted', async (t) => {
  const { provider, proxy, dir, storePath } = await startApprovalsRig(t)
  const env = providerEnv(provider, { PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET })

  const later = join(dir, 'later', 'webhooks.db')
  const fresh = await check(t, { ...env, PROXY_WEBHOOK_STORE_PATH: later })
  t.equal(fresh.code, 0, fresh.out)
  t.match(fresh.out, `ok    approvals store: ${later} is created at the sidecar's start (${dir} is writable)`)
  t.notOk(existsSync(later), 'check did not create it')

  t.equal((await pay(proxy, { amount: '300', currency: 'KES', externalReference: 'check-1' })).status, 202)
  const beside = await check(t, { ...env, PROXY_WEBHOOK_STORE_PATH: storePath })
  t.equal(beside.code, 0, beside.out)
  t.match(beside.out, `ok    approvals store: ${storePath} opens, 1 pending`)
  t.match(beside.out, /warn {2}approvals: caller treasurer is an approver and is limited by approveAbove/)
})

t.test('embedded store: a path that cannot be created, a file that is not SQLite and a missing signing secret fail check', async (t) => {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const notADir = join(dir, 'a-file')
  writeFileSync(notADir, 'x')
  const env = providerEnv(provider, { PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_WEBHOOK_STORE_PATH: join(notADir, 'webhooks.db') })
  const failed = await check(t, env)
  t.equal(failed.code, 1)
  t.match(failed.out, /FAIL {2}approvals: PROXY_APPROVAL_SIGNING_SECRET \(or PROXY_APPROVAL_SIGNING_SECRET_FILE\) is required/)
  t.match(failed.out, `FAIL  approvals store: ${join(notADir, 'webhooks.db')} cannot be created: ${notADir} is not a directory (PROXY_WEBHOOK_STORE_PATH)`)
  t.match(failed.out, /some checks failed/)

  const garbage = join(dir, 'garbage.db')
  writeFileSync(garbage, 'not a database, but long enough to look like a header of one '.repeat(4))
  const unreadable = await check(t, { ...env, PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET, PROXY_WEBHOOK_STORE_PATH: garbage })
  t.equal(unreadable.code, 1)
  t.match(unreadable.out, `FAIL  approvals store: ${garbage} cannot be read as an SQLite database`)
})

t.test('without approveAbove the approvals store is skipped', async (t) => {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const callers = join(dir, 'callers.yaml')
  writeFileSync(callers, 'callers:\n  - id: app\n    sources: [127.0.0.1/32]\n    allow: [{}]\n')
  const { code, out } = await check(t, providerEnv(provider, { PROXY_CALLERS_FILE: callers, PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db') }))
  t.equal(code, 0, out)
  t.match(out, 'skip  approvals store: no caller uses approveAbove')
})

t.test('Redis: reported when it answers; when it is down, check fails without printing its URL', async (t) => {
  const provider = await startProvider(t)
  const redis = await startRedis(t, { password: 'approvals-check-secret' })
  const dir = tempDir(t)
  const env = providerEnv(provider, { PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET, PROXY_REDIS_URL: redis.url, PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db') })
  const up = await check(t, env)
  t.equal(up.code, 0, up.out)
  t.match(up.out, 'ok    approvals store: Redis answers, 0 pending')

  await redis.stop()
  const child = runCli(t, ['check'], env)
  // When each line arrives: the state store's comes right after the approvals store's, from the one answer.
  const arrivals = new Map<string, number>()
  child.process.stdout?.on('data', () => {
    for (const store of ['approvals store', 'state store']) if (!arrivals.has(store) && child.stdout().includes(`FAIL  ${store}:`)) arrivals.set(store, Date.now())
  })
  t.equal((await child.exited).code, 1)
  const down = { out: child.stdout() + child.stderr() }
  t.match(down.out, /^FAIL {2}approvals store: Redis did not answer within 5 s \([^)]+\): check PROXY_REDIS_URL \(or PROXY_REDIS_URL_FILE\), the server and the network$/m)
  t.match(down.out, /^FAIL {2}state store: Redis did not answer within 5 s/m)
  // Issue 43 item 12: one wait for the whole check; each store waited 5 s of its own before.
  const gapMs = (arrivals.get('state store') ?? Infinity) - (arrivals.get('approvals store') ?? 0)
  t.ok(gapMs < 2_000, `the state store's line did not wait again: ${gapMs} ms after the approvals store's`)
  t.notOk(down.out.includes('approvals-check-secret'), 'the password is never printed')
  t.notOk(up.out.includes(SIGNING_SECRET) || down.out.includes(SIGNING_SECRET), 'the signing secret is never printed')
})

// Issue 43 item 12: the approvals store's line said "Redis did not answer" after 5 s where the state
// store's said WRONGPASS; eight JSON warnings of the store's reconnects came with the report.
t.test('Redis refusing the password: each store\'s line says so at once; the report is stdout, one log line on stderr', async (t) => {
  const provider = await startProvider(t)
  const password = 'approvals-check-pw-4471'
  const redis = await startRedis(t, { password })
  const dir = tempDir(t)
  const base = { PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db') }
  for (const [url, refusal] of [
    [`redis://:wrong-${password}@127.0.0.1:${redis.port}`, 'WRONGPASS: the user name or password in the URL is wrong'],
    [`redis://127.0.0.1:${redis.port}`, 'NOAUTH: Redis requires a password and the URL has none'],
  ] as const) {
    const child = runCli(t, ['check'], providerEnv(provider, { ...base, PROXY_REDIS_URL: url }))
    t.equal((await child.exited).code, 1)
    const out = child.stdout()
    for (const store of ['approvals store', 'state store']) t.match(out, `FAIL  ${store}: Redis refused the connection: ${refusal}`, `${store}: ${refusal}`)
    t.ok(out.split('\n').every((line) => !line.startsWith('{')), `no log line in the report:\n${out}`)
    const logLines = child.stderr().trim().split('\n').filter((line) => line.startsWith('{'))
    t.equal(logLines.length, 1, `one log line on stderr, not one per reconnect:\n${child.stderr()}`)
    t.notMatch(out + child.stderr(), password, 'the password is never printed or logged')

    // A refusal is an answer: the approvals' check reports it without waiting out the 5 s.
    const { logger } = captureLogger()
    const started = Date.now()
    const checked = loadConfig(providerEnv(provider, { ...base, PROXY_REDIS_URL: url })).config
    const storage = createStorage(checked.state, 'check')
    t.teardown(storage.close)
    const approvals = await checkApprovals(checked, readCallers(base.PROXY_CALLERS_FILE), { log: logger, storage })
    t.match(approvals.lines.at(-1), `FAIL  approvals store: Redis refused the connection: ${refusal}`)
    t.ok(Date.now() - started < 3000, `${refusal.split(':')[0] ?? refusal}: reported without waiting out the 5 s`)
  }
})

function readCallers (file: string): CallerSpec[] {
  const read = readCallersFile(file)
  if (!read.ok) throw new Error(read.problems.join('\n'))
  return read.callers
}
