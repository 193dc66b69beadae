/**
 * `npm run demo`: the proxy in front of the built-in fake provider, with demo credentials and
 * human-readable logs, so anyone can try the sidecar without an account. Ctrl-C stops both.
 */
import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import pretty from 'pino-pretty'
import { loadConfig } from './config/load-config.js'
import { listenProblem, type ListenSettings } from './http/listen-check.js'
import { PROVIDER_PORT_VARIABLES, providerPorts, proxyEnvFor, startFakeProvider, type ProviderPorts } from './fake-provider/index.js'
import { loggerOptions } from './logger.js'
import { buildServer } from './server.js'

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
  ...Object.entries(PROVIDER_PORT_VARIABLES).map(([key, name]): [number, ListenSettings] => [providerPortsWanted[key as keyof ProviderPorts], { host: name, port: name }]),
]
for (const [wantedPort, settings] of wanted) {
  const taken = Number.isInteger(wantedPort) ? await listenProblem('127.0.0.1', wantedPort, settings) : null
  if (taken !== null) stop(taken)
}
const provider = await startFakeProvider(providerPortsWanted)
const { config, warnings } = loadConfig({
  ...proxyEnvFor(provider),
  PROXY_EGRESS_IP_URL: provider.ipEchoUrl,
  PROXY_PORT: String(port),
  LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'info',
})
const log = pino(loggerOptions(config.logLevel), pretty({ colorize: process.stdout.isTTY, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,service' }))
for (const warning of warnings) log.warn({ warning }, 'configuration warning')

const { app } = await buildServer(config, { logger: log })
closeWithGrace({ delay: 5_000, skip: ['SIGHUP'] }, async () => {
  await app.close()
  await provider.close()
})
await app.listen({ host: config.listen.host, port: config.listen.port })

const base = `http://127.0.0.1:${config.listen.port}`
process.stdout.write(`
payments-auth-proxy demo: the proxy on ${base}, a fake provider behind it (demo credentials):
fiat ${provider.fiatBaseUrl}, crypto ${provider.cryptoBaseUrl}, IP echo ${provider.ipEchoUrl}.
Try, from another terminal:

  curl -s ${base}/readyz
  curl -s '${base}/fiat/v1/accounts/balance?currency=KES'
  curl -s -X POST ${base}/sandbox/fiat/v1/payouts -H 'content-type: application/json' -d '{"amount":100,"currency":"KES","externalReference":"demo-1"}'
  curl -s ${base}/production/crypto/v1/wallets
  curl -s -i ${base}/production/fiat/auth/generate-bearer-token     # 403: the token endpoint is never proxied
  curl -s ${base}/metrics | grep payments_auth_proxy_token

The fake upstream echoes what it received: note the Authorization header the proxy injected.
Ctrl-C stops everything.

`)
