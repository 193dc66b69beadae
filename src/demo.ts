/**
 * `npm run demo`: the proxy in front of the built-in fake provider, with demo credentials and
 * human-readable logs, so anyone can try the sidecar without an account. The webhook inbox and
 * payments are on, and a small application prints what the sidecar delivers to it: a payout is
 * answered `pending`, the fake provider settles it a few seconds later and sends its webhook to the
 * inbox, a look-up confirms it, and the application receives the event and `payment.succeeded`.
 * Its store is a temporary directory, removed at the end. Ctrl-C stops everything.
 */
import closeWithGrace from 'close-with-grace'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import pretty from 'pino-pretty'
import { loadConfig } from './load-config.js'
import { listenProblem, type ListenSettings } from './http/listen-check.js'
import { PROVIDER_PORT_VARIABLES, providerPorts, proxyEnvFor, startFakeProvider, type ProviderPorts } from './fake-provider/index.js'
import { loggerOptions } from './logger.js'
import { buildServer } from './server.js'
import { terminalText } from './text/terminal-safe.js'
import { buildInbox } from './webhooks/inbox-server.js'

/** The fake provider's dashboard secret: it sends it as is, as the real one does (SPEC §10). */
const PROVIDER_WEBHOOK_SECRET = 'demo-provider-dashboard-secret'
const SETTLE_AFTER_MS = 5_000

function stop (line: string): never {
  process.stderr.write(`payments-auth-proxy demo: ${line}\n`)
  process.exit(1)
}

const port = Number(process.env['PROXY_PORT'] ?? '8080')
// The fake provider's ports are free ones unless pinned (FAKE_PROVIDER_FIAT_PORT, ...: README, Try it).
let providerPortsWanted: ProviderPorts
try {
  providerPortsWanted = providerPorts(process.env, { fiatPort: 0, cryptoPort: 0, ipEchoPort: 0 })
} catch (err) {
  stop((err as Error).message)
}
// Asked before the fake provider starts, so a taken port is the one line the demo prints.
const wanted: Array<[number, ListenSettings]> = [
  [port, { host: 'PROXY_HOST', port: 'PROXY_PORT' }],
  ...Object.entries(PROVIDER_PORT_VARIABLES).map(([key, name]): [number, ListenSettings] => [
    providerPortsWanted[key as keyof ProviderPorts],
    { host: name, port: name },
  ]),
]
for (const [wantedPort, settings] of wanted) {
  const taken = Number.isInteger(wantedPort) ? await listenProblem('127.0.0.1', wantedPort, settings) : null
  if (taken !== null) stop(taken)
}
const provider = await startFakeProvider(providerPortsWanted)
const application = await startApplication()
const dir = mkdtempSync(join(tmpdir(), 'payments-auth-proxy-demo-'))
const pathToken = `wht_${randomBytes(18).toString('base64url')}`
const { config, warnings } = loadConfig({
  ...proxyEnvFor(provider),
  PROXY_EGRESS_IP_URL: provider.ipEchoUrl,
  PROXY_PORT: String(port),
  LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'info',
  PROXY_PAYMENTS: 'on',
  PROXY_WEBHOOK_LISTEN: '127.0.0.1:0',
  PROXY_WEBHOOK_PATH_TOKEN: pathToken,
  PROXY_WEBHOOK_SIGNING_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
  PROXY_SEALING_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
  PROXY_WEBHOOK_VERIFY_SECRET: PROVIDER_WEBHOOK_SECRET,
  PROXY_WEBHOOK_DELIVER_TO: application.url,
  PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db'),
})
const log = pino(loggerOptions(config.logLevel), pretty({ colorize: process.stdout.isTTY, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,service' }))
for (const warning of warnings) log.warn({ warning }, 'configuration warning')

const server = await buildServer(config, { logger: log })
const payments = server.shared.payments?.running ?? null
const inbox = config.webhooks === null ? null : await buildInbox(config.webhooks, config.state, {
  logger: log,
  registry: server.metrics.registry,
  onStored: payments?.wake,
})
if (inbox !== null) await payments?.readEvents(inbox.store)
closeWithGrace({ delay: 5_000, skip: ['SIGHUP'] }, async () => {
  await Promise.all([server.app.close(), inbox?.app.close()])
  await Promise.all([provider.close(), application.close()])
  rmSync(dir, { recursive: true, force: true })
})
await server.app.listen({ host: config.listen.host, port: config.listen.port })
await inbox?.app.listen({ host: '127.0.0.1', port: 0 })
const inboxPort = (inbox?.app.server.address() as { port: number } | null)?.port
provider.transactions.configure({ settleAfterMs: SETTLE_AFTER_MS, webhook: { url: `http://127.0.0.1:${inboxPort}/webhooks/${pathToken}`, secret: PROVIDER_WEBHOOK_SECRET } })

const base = `http://127.0.0.1:${config.listen.port}`
process.stdout.write(`
payments-auth-proxy demo: the proxy on ${base}, a fake provider behind it (demo credentials):
fiat ${provider.fiatBaseUrl}, crypto ${provider.cryptoBaseUrl}, IP echo ${provider.ipEchoUrl}.
The webhook inbox on 127.0.0.1:${inboxPort}, and an application at ${application.url} that prints what it gets.
Try, from another terminal:

  curl -s ${base}/readyz
  curl -s '${base}/fiat/v1/accounts/balance?currency=KES'      # echoed: note the Authorization header the proxy injected
  curl -s -i -X POST ${base}/sandbox/fiat/v1/payouts -H 'content-type: application/json' -d '{"amount":100,"currency":"KES","externalReference":"demo-1"}'
  curl -s ${base}/payments/demo-1                                 # pending; after about ${SETTLE_AFTER_MS / 1000} s, succeeded
  curl -s -i ${base}/production/fiat/auth/generate-bearer-token   # 403: the token endpoint is never proxied
  curl -s ${base}/metrics | grep -E 'payments_auth_proxy_(token|payment)'

The payout is answered pending with a transaction id and a Payment-Id. A few seconds later the fake
provider settles it and sends its webhook to the inbox; the sidecar confirms it with a look-up, and
the application below receives the provider's event and then payment.succeeded, both signed.
Ctrl-C stops everything.

`)

/** The demo's application: answers 200 to every delivery and prints what it was. */
async function startApplication (): Promise<{ url: string, close: () => Promise<void> }> {
  const app = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.end('ok')
      let body: {
        type?: string
        event?: string
        payment?: { externalReference?: string, state?: string, settledBy?: string }
        data?: { status?: string }
      } = {}
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body } catch { /* printed as it is below */ }
      const what = body.type !== undefined
        ? `${body.type} for ${body.payment?.externalReference ?? '?'} (${body.payment?.state ?? '?'}, settled by ${body.payment?.settledBy ?? '-'})`
        : `the provider's event ${body.event ?? '(not JSON)'} (${body.data?.status ?? '?'})`
      process.stdout.write(`\napplication received ${terminalText(String(req.headers['webhook-id']))}: ${terminalText(what)}\n\n`)
    })
  })
  app.listen(0, '127.0.0.1')
  await once(app, 'listening')
  const address = app.address() as { port: number }
  return { url: `http://127.0.0.1:${address.port}/payments/events`, close: async () => { app.closeAllConnections(); app.close() } }
}
