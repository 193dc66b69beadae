/**
 * Issue 43 item 17: one info line at start says what is on besides the proxy: the callers file and
 * how many callers, approvals and their store, the webhook inbox and its address; never a secret.
 */
import { join } from 'node:path'
import t from 'tap'
import { startSummary } from '../../src/ops/start-summary.js'
import { loadConfig } from '../../src/load-config.js'
import { runCli } from '../helpers/child-proxy.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { SEALING_SECRET, SIGNING_SECRET as APPROVAL_SECRET, approvalsCallersFile, tempDir } from '../approvals/approvals-harness.js'
import { PATH_TOKEN, SIGNING_SECRET as INBOX_SECRET } from '../webhooks/inbox-harness.js'

function startLine (stdout: string): Record<string, unknown> | undefined {
  return stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>).find((r) => String(r['msg']).startsWith('features:'))
}

t.test('the start line names the callers file and its callers, approvals and the inbox, and never a secret', async (t) => {
  const provider = await startProvider(t)
  const redis = await startRedis(t, { password: 'features-redis-pw-9913' })
  const dir = tempDir(t)
  const callersFile = approvalsCallersFile(dir)
  const env = providerEnv(provider, {
    PROXY_CALLERS_FILE: callersFile,
    PROXY_APPROVAL_SIGNING_SECRET: APPROVAL_SECRET,
    PROXY_APPROVAL_SEALING_SECRET: SEALING_SECRET,
    PROXY_REDIS_URL: redis.url,
    PROXY_WEBHOOK_LISTEN: '127.0.0.1:0',
    PROXY_WEBHOOK_PATH_TOKEN: PATH_TOKEN,
    PROXY_WEBHOOK_SIGNING_SECRET: INBOX_SECRET,
    PROXY_WEBHOOK_DELIVER_TO: 'http://127.0.0.1:9/events',
    PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db'),
  })
  const child = runCli(t, [], env)
  await child.waitFor(/webhook inbox ready to accept events/)
  const line = startLine(child.stdout())
  t.match(line, {
    level: 30,
    msg: 'features: callers file (2 callers), approvals (Redis), webhook inbox (127.0.0.1:0)',
    callersFile, callers: 2, approvals: 'redis', webhookInbox: '127.0.0.1:0', stateStore: 'redis',
  })
  const all = child.stdout() + child.stderr()
  for (const secret of [APPROVAL_SECRET, INBOX_SECRET, PATH_TOKEN, 'features-redis-pw-9913']) t.notOk(all.includes(secret), 'no secret logged')
  child.process.kill('SIGTERM')
  await child.exited
})

t.test('without callers file, approvals or inbox, the line says none', async (t) => {
  const provider = await startProvider(t)
  const child = runCli(t, [], providerEnv(provider))
  await child.waitFor(/payments-auth-proxy listening/)
  t.match(startLine(child.stdout()), { msg: 'features: none (no callers file, approvals or webhook inbox)', callersFile: null, callers: null, approvals: null, webhookInbox: null, stateStore: 'memory' })
  child.process.kill('SIGTERM')
  await child.exited
})

t.test('the summary of each combination', async (t) => {
  const base = { PAYMENTS_FIAT_BASE_URL: 'https://fiat.example.com/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_k', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_k' }
  const inbox = { PROXY_WEBHOOK_LISTEN: '[::]:8443', PROXY_WEBHOOK_PATH_TOKEN: PATH_TOKEN, PROXY_WEBHOOK_SIGNING_SECRET: INBOX_SECRET, PROXY_WEBHOOK_DELIVER_TO: 'http://127.0.0.1:3000/e' }
  const index = (n: number): Parameters<typeof startSummary>[1] => ({ all: Array.from({ length: n }, () => ({}) as never), byKey: new Map(Array.from({ length: n }, (_, i) => [`k${i}`, { spec: {} as never, sources: null }])), keyless: [], byToken: [] })
  const cases: Array<[string, Record<string, string>, number | null, boolean, string]> = [
    ['callers only', { PROXY_CALLERS_FILE: '/etc/c.yaml' }, 3, false, 'features: callers file (3 callers)'],
    ['callers and approvals in SQLite', { PROXY_CALLERS_FILE: '/etc/c.yaml' }, 1, true, 'features: callers file (1 caller), approvals (SQLite)'],
    ['the inbox alone, on IPv6', inbox, null, false, 'features: webhook inbox ([::]:8443)'],
  ]
  for (const [label, env, callers, approvals, msg] of cases) {
    const { config } = loadConfig({ ...base, ...env })
    t.equal(startSummary(config, callers === null ? null : index(callers), approvals).msg, msg, label)
  }
})
