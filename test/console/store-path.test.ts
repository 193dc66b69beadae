/**
 * Issue 57: the console's sign-in store, like every other store (approvals: test/approvals/store-path.test.ts),
 * stops `console-link` with one line naming PROXY_WEBHOOK_STORE_PATH when its file cannot be
 * opened, not a stack trace.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { approvalsCallersFile, SEALING_SECRET, SIGNING_SECRET, tempDir } from '../approvals/approvals-harness.js'
import { APPROVER, freePort } from './console-rig.js'

t.test('console-link: a store path below a file is one line naming the variable', async (t) => {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const file = join(dir, 'a-file')
  writeFileSync(file, 'x')
  const storePath = join(file, 'webhooks.db')
  const child = runCli(t, ['console-link', '--as', 'ann@example.com'], providerEnv(provider, {
    PROXY_CALLERS_FILE: approvalsCallersFile(dir),
    PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET,
    PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET,
    PROXY_WEBHOOK_STORE_PATH: storePath,
    PROXY_CONSOLE_LISTEN: `127.0.0.1:${await freePort()}`,
    PROXY_CONSOLE_APPROVERS: APPROVER,
  }))
  t.equal((await child.exited).code, 1)
  const lines = child.stderr().trim().split('\n')
  t.equal(lines.length, 1, `one line, no stack: ${child.stderr()}`)
  t.match(lines[0], `payments-auth-proxy: the console sign-in store PROXY_WEBHOOK_STORE_PATH=${storePath} cannot be opened (`)
  t.equal(child.stdout(), '', 'no link printed')
})
