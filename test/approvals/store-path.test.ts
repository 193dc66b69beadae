/**
 * Issue 43 item 11: a PROXY_WEBHOOK_STORE_PATH the approvals' SQLite store cannot open stops `serve`
 * and the approvals command with one line naming the variable (as the inbox's store does), not a
 * stack; and `check` finds it first: whether a directory takes a new file is tried, not asked, since
 * access(2) tells root that /proc is writable.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { SEALING_SECRET, SIGNING_SECRET, approvalsCallersFile, tempDir } from './approvals-harness.js'

const onLinux = process.platform === 'linux' ? false : 'needs /proc'

async function approvalsEnv (t: Parameters<typeof runCli>[0], storePath: string): Promise<Record<string, string | undefined>> {
  const provider = await startProvider(t)
  return providerEnv(provider, { PROXY_CALLERS_FILE: approvalsCallersFile(tempDir(t)), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET, PROXY_WEBHOOK_STORE_PATH: storePath })
}

function badPaths (t: Parameters<typeof runCli>[0]): Array<[string, string]> {
  const dir = tempDir(t)
  const file = join(dir, 'a-file')
  writeFileSync(file, 'x')
  return [['a directory', dir], ['below a file', join(file, 'webhooks.db')], ...(onLinux === false ? [['in /proc', '/proc/webhooks.db'] as [string, string]] : [])]
}

t.test('serve and the approvals command stop with one line naming PROXY_WEBHOOK_STORE_PATH', async (t) => {
  for (const [label, storePath] of badPaths(t)) {
    const env = await approvalsEnv(t, storePath)
    for (const args of [[], ['approvals', 'list']]) {
      const child = runCli(t, args, env)
      const { code } = await child.exited
      const what = `${args.join(' ') || 'serve'}, ${label}`
      t.equal(code, 1, what)
      const lines = child.stderr().trim().split('\n')
      t.equal(lines.length, 1, `${what}: one line, no stack: ${child.stderr()}`)
      t.match(lines[0], `payments-auth-proxy: the approvals store PROXY_WEBHOOK_STORE_PATH=${storePath} cannot be opened (`, what)
      t.notMatch(child.stdout(), /listening/, `${what}: nothing started`)
    }
  }
})

t.test('check fails each of them, naming the variable, and leaves nothing in the directory it tried', async (t) => {
  const dir = tempDir(t)
  const cases: Array<[string, RegExp]> = [
    [dir, new RegExp(`^FAIL  approvals store: ${dir} is a directory, not a database file \\(PROXY_WEBHOOK_STORE_PATH\\)$`, 'm')],
  ]
  if (onLinux === false) cases.push(['/proc/webhooks.db', /^FAIL {2}approvals store: \/proc\/webhooks\.db cannot be created: \/proc does not take new files \(E[A-Z]+\) \(PROXY_WEBHOOK_STORE_PATH\)$/m])
  for (const [storePath, expected] of cases) {
    const child = runCli(t, ['check'], await approvalsEnv(t, storePath))
    t.equal((await child.exited).code, 1, storePath)
    t.match(child.stdout(), expected, storePath)
    t.match(child.stdout(), /some checks failed/)
  }
  const fresh = join(dir, 'later', 'webhooks.db')
  const child = runCli(t, ['check'], await approvalsEnv(t, fresh))
  t.equal((await child.exited).code, 0, child.stdout())
  t.match(child.stdout(), `ok    approvals store: ${fresh} is created at the sidecar's start (${dir} is writable)`)
  t.notOk(existsSync(join(dir, 'later')), 'nothing created')
  t.same(readdirSync(dir), [], 'the file check tried creating is gone')
})
