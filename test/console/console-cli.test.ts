/**
 * The console as `npm start` and the image run it (dist-bundle/cli.mjs): started only with
 * PROXY_CONSOLE_LISTEN, its templates found beside the bundle's chunk, `console-link` printing a
 * link from another process that the running sidecar takes once, a decision on it forwarded by the
 * sidecar, and `check` saying how the console is set up.
 */
import t from 'tap'
import { join } from 'node:path'
import { runCli } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { approvalsCallersFile, pay, payouts, SEALING_SECRET, SIGNING_SECRET, tempDir } from '../approvals/approvals-harness.js'
import { APPROVER, ConsoleClient, csrfOf, freePort } from './console-rig.js'

t.test('served from the bundle: console-link from another process signs in once, and a decision there is sent by the sidecar', async (t) => {
  const provider = await startProvider(t)
  const dir = tempDir(t)
  const port = await freePort()
  const env = providerEnv(provider, {
    PROXY_CALLERS_FILE: approvalsCallersFile(dir),
    PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET,
    PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET,
    PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db'),
    PROXY_CONSOLE_LISTEN: `127.0.0.1:${port}`,
    PROXY_CONSOLE_APPROVERS: APPROVER,
  })
  const sidecar = runCli(t, [], env)
  await sidecar.waitFor(/console ready/)
  const proxyUrl = `http://127.0.0.1:${/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(sidecar.stdout())?.[1] ?? ''}`
  const consoleUrl = `http://127.0.0.1:${port}`

  const linkCommand = runCli(t, ['console-link', '--as', 'Ann@Example.com'], env)
  t.equal((await linkCommand.exited).code, 0)
  const link = linkCommand.stdout().trim()
  t.match(link, new RegExp(`^${consoleUrl}/signin#[A-Za-z0-9_-]{43}$`), 'the link is the only output')
  t.match(linkCommand.stderr(), /for ann@example\.com, good once within 10 minutes; may decide approvals/)

  const response = await pay({ url: proxyUrl } as Parameters<typeof pay>[0], { amount: 250, currency: 'KES', externalReference: 'ref-cli' })
  t.equal(response.status, 202)
  const { approval } = await response.json() as { approval: { id: string } }
  const client = new ConsoleClient(consoleUrl)
  t.equal((await client.post('/signin', { secret: link.slice(link.indexOf('#') + 1) })).status, 303)
  const page = await client.get('/approvals')
  t.match(page.text, /250 <span class="currency">KES<\/span>/, 'the page rendered from the bundle\'s templates')
  t.match((await client.get('/console.css')).text, /system-ui/)
  t.equal((await new ConsoleClient(consoleUrl).post('/signin', { secret: link.slice(link.indexOf('#') + 1) })).status, 403, 'once')
  const review = await client.post(`/approvals/${approval.id}/review`, { _csrf: csrfOf(page.text), decision: 'approve' })
  t.equal((await client.post(`/approvals/${approval.id}/decide`, { _csrf: csrfOf(review.text), decision: 'approve' })).status, 303)
  await eventually(() => payouts(provider).length === 1, { what: 'the payout sent by the sidecar', timeoutMs: 2_000 })
  await sidecar.waitFor(/"msg":"console sign-in link used again: refused"/)
  t.notOk((sidecar.stdout() + sidecar.stderr()).includes(link.slice(link.indexOf('#') + 1)), 'the secret in no log line')

  const check = runCli(t, ['check'], env)
  await check.exited
  t.match(check.stdout(), new RegExp(`warn  console: port ${port} is in use \\(PROXY_CONSOLE_LISTEN\\) \\(the sidecar itself, when check runs beside it\\); people reach it at ${consoleUrl}`))
  t.match(check.stdout(), /ok {4}console: sign-in from 127\.0\.0\.0\/8, ::1\/128 by link/)
  t.match(check.stdout(), /ok {4}console: approvers ann@example\.com; everyone else reads only/)
})

t.test('console-link says what is missing: the console off, or no email address', async (t) => {
  const provider = await startProvider(t)
  const off = runCli(t, ['console-link', '--as', APPROVER], providerEnv(provider))
  t.equal((await off.exited).code, 2)
  t.match(off.stderr(), /the console is not configured \(PROXY_CONSOLE_LISTEN/)
  t.equal(off.stdout(), '')
  const noEmail = runCli(t, ['console-link', '--as', 'ann'], providerEnv(provider, { PROXY_CONSOLE_LISTEN: '127.0.0.1:1', PROXY_WEBHOOK_STORE_PATH: join(tempDir(t), 'w.db') }))
  t.equal((await noEmail.exited).code, 2)
  t.match(noEmail.stderr(), /--as needs the email address of the person who signs in\nusage: payments-auth-proxy console-link --as <email>/)
})

t.test('with Redis, a link printed by console-link signs in on the sidecar once, and its session lives in Redis', async (t) => {
  const [provider, redis] = await Promise.all([startProvider(t), startRedis(t)])
  const dir = tempDir(t)
  const port = await freePort()
  const env = providerEnv(provider, {
    PROXY_CALLERS_FILE: approvalsCallersFile(dir), PROXY_APPROVAL_SIGNING_SECRET: SIGNING_SECRET, PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET,
    PROXY_REDIS_URL: redis.url, PROXY_CONSOLE_LISTEN: `127.0.0.1:${port}`, PROXY_CONSOLE_APPROVERS: APPROVER,
  })
  const sidecar = runCli(t, [], env)
  await sidecar.waitFor(/console ready/)
  const command = runCli(t, ['console-link', '--as', APPROVER], env)
  t.equal((await command.exited).code, 0)
  const secret = command.stdout().trim().split('#')[1] ?? ''
  const client = new ConsoleClient(`http://127.0.0.1:${port}`)
  t.equal((await client.post('/signin', { secret })).status, 303)
  t.match((await client.get('/approvals')).text, /Nothing waits for a decision/)
  t.equal((await new ConsoleClient(`http://127.0.0.1:${port}`).post('/signin', { secret })).status, 403, 'once')
  const { Redis } = await import('ioredis')
  const admin = new Redis(redis.url)
  t.teardown(() => { admin.disconnect() })
  t.equal((await admin.keys('pap:console:session:*')).length, 1, 'one session, under its hash')
  t.notOk((await admin.keys('*')).some((key) => key.includes(secret)), 'the link\'s secret is in no key')
})
