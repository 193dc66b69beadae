import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parse } from 'yaml'
import { loadConfig } from '../../src/load-config.js'
import { buildInbox } from '../../src/webhooks/inbox-server.js'
import { captureLogger, providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { inboxEnv, startApp } from '../webhooks/inbox-harness.js'

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
const HISTOGRAM_PARTS = /_(bucket|sum|count)$/

function usedNames (text: string): Set<string> {
  return new Set([...text.matchAll(/payments_auth_proxy_[a-z_]+/g)].map((m) => m[0]))
}

t.test('every metric the dashboard and the alert rules use is one the proxy exports', async (t) => {
  const provider = await startProvider(t)
  const dir = mkdtempSync(join(tmpdir(), 'pap-observability-'))
  const callersFile = join(dir, 'callers.json')
  const approveAbove = [{ amount: '/amount', currency: '/currency', perRequest: { KES: 1000 }, approveAbove: { KES: 100 } }]
  writeFileSync(callersFile, JSON.stringify({ callers: [{ id: 'agent', keySha256: 'a'.repeat(64), allow: [{}], amountLimits: approveAbove }] }))
  // Every optional part on, so that every metric is registered.
  const proxy = await startProxy(t, providerEnv(provider, {
    PROXY_CALLERS_FILE: callersFile,
    PROXY_APPROVAL_SIGNING_SECRET: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
    PROXY_APPROVAL_SEALING_SECRET: `whsec_${Buffer.alloc(32, 2).toString('base64')}`,
    PROXY_WEBHOOK_STORE_PATH: join(dir, 'approvals.db'),
    PROXY_EGRESS_IP_URL: provider.ipEchoUrl,
    PROXY_EXPECTED_EGRESS_IPS: '203.0.113.7',
    PROXY_PAYMENTS: 'on',
    PROXY_PAYMENTS_NOTIFY_URL: 'http://127.0.0.1:9/notifications',
    PROXY_WEBHOOK_SIGNING_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }))
  await waitReady(proxy)
  // The webhook inbox registers its metrics on the proxy's registry when it is on.
  const app = await startApp(t)
  const { config } = loadConfig(inboxEnv(app.url, join(dir, 'webhooks.db')))
  if (config.webhooks === null) throw new Error('inbox off')
  const inbox = await buildInbox(config.webhooks, config.state, { logger: captureLogger().logger, registry: proxy.metrics.registry })
  t.teardown(() => inbox.app.close())
  const exposition = await (await fetch(`${proxy.url}/metrics`)).text()
  const exported = new Set([...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => m[1] as string))
  const histograms = new Set([...exposition.matchAll(/^# TYPE (\S+) histogram$/gm)].map((m) => m[1] as string))

  const sources = { 'deploy/grafana/payments-auth-proxy.json': read('deploy/grafana/payments-auth-proxy.json'), 'deploy/prometheus/alerts.yml': read('deploy/prometheus/alerts.yml') }
  for (const [file, text] of Object.entries(sources)) {
    const names = usedNames(text)
    t.ok(names.size > 5, `${file} uses ${names.size} metrics`)
    for (const name of names) {
      const base = name.replace(HISTOGRAM_PARTS, '')
      const known = exported.has(name) || (base !== name && histograms.has(base))
      t.ok(known, `${file}: ${name} is exported`)
    }
  }
  t.doesNotThrow(() => JSON.parse(sources['deploy/grafana/payments-auth-proxy.json']) as unknown, 'the dashboard is JSON')
})

t.test('the alert rules and the dashboard cover stale payments, disputed events and failing look-ups (SPEC §12)', async (t) => {
  const rules = (parse(read('deploy/prometheus/alerts.yml')) as { groups: Array<{ rules: Array<{ alert: string, expr: string }> }> }).groups.flatMap((g) => g.rules)
  const dashboard = read('deploy/grafana/payments-auth-proxy.json')
  for (const [what, used] of [['stale payments', /payments_auth_proxy_payments_stale\b/], ['disputed events', /payment_events_total\{outcome="disputed"\}/], ['failing look-ups', /payment_lookups_total\{outcome="failed"\}/]] as const) {
    t.ok(rules.some((rule) => used.test(rule.expr)), `an alert on ${what}`)
  }
  for (const name of ['payments_pending', 'payments_stale', 'payment_lookups_total', 'payment_events_total', 'payments_tracked_total', 'payment_settle_seconds']) {
    t.ok(dashboard.includes(`payments_auth_proxy_${name}`), `a panel shows ${name}`)
  }
})
