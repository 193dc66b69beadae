/**
 * The operator side of SPEC §10 on the real built process: `webhook-secrets`, `webhooks list|show|replay`
 * on the store of a running sidecar, the `/readyz` section and the metrics, and SIGTERM.
 */
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { loadConfig } from '../../src/load-config.js'
import { listeningPort, runCli, type Child } from '../helpers/child-proxy.js'
import { eventually } from '../helpers/eventually.js'
import { providerEnv, startProvider } from '../helpers/harness.js'
import { inboxEnv, inboxPortOf, PATH_TOKEN, post, startApp, tempDir } from './inbox-harness.js'

async function finished (child: Child): Promise<{ code: number | null, out: string, err: string }> {
  const { code } = await child.exited
  return { code, out: child.stdout(), err: child.stderr() }
}

t.test('webhook-secrets prints a path token and a signing secret that the configuration and standardwebhooks accept', async (t) => {
  const { code, out } = await finished(runCli(t, ['webhook-secrets'], {}))
  t.equal(code, 0)
  const token = /^PROXY_WEBHOOK_PATH_TOKEN=(\S+)$/m.exec(out)?.[1] ?? ''
  const secret = /^PROXY_WEBHOOK_SIGNING_SECRET=(\S+)$/m.exec(out)?.[1] ?? ''
  const approvalSigning = /^PROXY_APPROVAL_SIGNING_SECRET=(\S+)$/m.exec(out)?.[1] ?? ''
  const approvalSealing = /^PROXY_APPROVAL_SEALING_SECRET=(\S+)$/m.exec(out)?.[1] ?? ''
  const { config } = loadConfig(inboxEnv('http://127.0.0.1:3000/e', '/tmp/x.db', {
    PROXY_WEBHOOK_PATH_TOKEN: token, PROXY_WEBHOOK_SIGNING_SECRET: secret, PROXY_APPROVAL_SIGNING_SECRET: approvalSigning, PROXY_APPROVAL_SEALING_SECRET: approvalSealing,
  }))
  t.same(config.webhooks?.pathTokens, [token])
  t.equal(config.approvals.signingSecret, approvalSigning, 'the approvals\' signing secret is accepted beside the inbox\'s: another key')
  t.equal(config.approvals.sealingSecret, approvalSealing, 'and the sealing secret')
  for (const s of [secret, approvalSigning, approvalSealing]) t.doesNotThrow(() => new Webhook(s))
  const second = await finished(runCli(t, ['webhook-secrets'], {}))
  t.not(second.out, out, 'fresh each time')
})

async function sidecar (t: Test, appUrl: string, dir: string): Promise<{ child: Child, env: Record<string, string | undefined>, proxyPort: number, intakeUrl: string }> {
  const provider = await startProvider(t)
  const env = { ...inboxEnv(appUrl, join(dir, 'webhooks.db'), { PROXY_WEBHOOK_RETRY_SCHEDULE: '50ms' }), ...providerEnv(provider), LOG_LEVEL: 'info' }
  const child = runCli(t, [], env)
  const port = await inboxPortOf(child)
  return { child, env, proxyPort: listeningPort(child), intakeUrl: `http://127.0.0.1:${port}/webhooks/${PATH_TOKEN}` }
}

t.test('failed events are listed, shown and replayed from the command line; the running sidecar delivers a replay within 2 s', async (t) => {
  const app = await startApp(t)
  app.answer((_req, res) => { res.statusCode = 500; res.end() })
  const { child, env, proxyPort, intakeUrl } = await sidecar(t, app.url, tempDir(t))
  const ids: string[] = []
  for (let i = 0; i < 3; i++) ids.push(String((await post(intakeUrl, `{"n":${i}}`)).json['id']))
  await eventually(async () => {
    const { out } = await finished(runCli(t, ['webhooks', 'list', '--status', 'failed', '--json'], env))
    return out.trim().split('\n').filter((l) => l !== '').length === 3
  }, { what: 'three failed events listed', timeoutMs: 10_000, everyMs: 200 })
  const listed = (await finished(runCli(t, ['webhooks', 'list', '--json'], env))).out.trim().split('\n').map((l) => JSON.parse(l) as { id: string, status: string, attempts: number, bytes: number })
  t.same(listed.map((e) => [e.id, e.status, e.attempts, e.bytes]), ids.map((id) => [id, 'failed', 2, 7]))
  t.equal((await finished(runCli(t, ['webhooks', 'list', '--since', '2999-01-01T00:00:00Z', '--json'], env))).out, '', '--since filters')

  const shown = await finished(runCli(t, ['webhooks', 'show', ids[0] ?? ''], env))
  t.equal(shown.code, 0)
  const detail = JSON.parse(shown.out) as { attempts: Array<{ status: number }>, headers: unknown[] }
  t.same(detail.attempts.map((a) => a.status), [500, 500], 'every attempt with its status')
  t.notOk(shown.out.includes('"n":0'), 'the body is not printed')

  const readyz = await (await fetch(`http://127.0.0.1:${proxyPort}/readyz`)).json() as { webhooks: unknown }
  t.same(readyz.webhooks, { ready: true, pending: 0, failed: 3, oldestPendingAgeSeconds: 0 }, '/readyz shows the inbox')
  const metrics = await (await fetch(`http://127.0.0.1:${proxyPort}/metrics`)).text()
  t.match(metrics, /payments_auth_proxy_webhooks_received_total\{outcome="stored"\} 3/)
  t.match(metrics, /payments_auth_proxy_webhook_deliveries_total\{outcome="failed"\} 3/)
  t.match(metrics, /payments_auth_proxy_webhook_deliveries_total\{outcome="failed_attempt"\} 3/)
  t.match(metrics, /payments_auth_proxy_webhooks_failed 3/)
  t.match(metrics, /payments_auth_proxy_webhooks_pending 0/)
  t.match(metrics, /payments_auth_proxy_webhook_oldest_pending_age_seconds 0/)
  t.match(metrics, /payments_auth_proxy_webhook_intake_duration_seconds_count 3/)
  t.notOk(metrics.includes(PATH_TOKEN))

  app.answer((_req, res) => { res.end('ok') })
  const before = app.deliveries.length
  const replayed = await finished(runCli(t, ['webhooks', 'replay', ids[0] ?? '', 'msg_unknown'], env))
  t.equal(replayed.code, 1, 'exit 1: an id was not found')
  t.match(replayed.out, `replayed ${ids[0] ?? ''}`)
  t.match(replayed.err, 'no event msg_unknown')
  const replayedAt = Date.now()
  await eventually(() => app.deliveries.length > before, { what: 'the replay delivered', timeoutMs: 2_000 })
  t.ok(Date.now() - replayedAt < 2_000, 'within 2 s')
  t.equal(app.deliveries.at(-1)?.headers['webhook-id'], ids[0], 'the same webhook-id')

  const rest = await finished(runCli(t, ['webhooks', 'replay', '--failed', '--since', '2000-01-01T00:00:00Z'], env))
  t.equal(rest.code, 0)
  t.match(rest.out, '2 failed events back to pending')
  await eventually(() => new Set(app.deliveries.slice(before).map((d) => d.headers['webhook-id'])).size === 3, { what: 'all three delivered', timeoutMs: 3_000 })

  t.equal((await finished(runCli(t, ['webhooks', 'frobnicate'], env))).code, 2, 'usage error')
  child.process.kill('SIGTERM')
  const { code } = await child.exited
  t.equal(code, 0, 'SIGTERM: exit 0')
  t.match(child.stdout(), /"msg":"stopped"/)
  t.notOk(child.stdout().includes(PATH_TOKEN), 'the path token is in no log line')
})

t.test('webhooks commands without an inbox configured say so', async (t) => {
  const provider = await startProvider(t)
  const { code, err } = await finished(runCli(t, ['webhooks', 'list'], providerEnv(provider)))
  t.equal(code, 2)
  t.match(err, 'the webhook inbox is not configured')
})
