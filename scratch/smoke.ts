import { startFakeProvider, DEMO_CREDENTIALS } from '../src/fake-provider/index.js'
import { loadConfig } from '../src/config/load-config.js'
import { buildServer } from '../src/server.js'
import { createLogger } from '../src/logger.js'
const p = await startFakeProvider()
const { config, warnings } = loadConfig({
  PAYMENTS_FIAT_BASE_URL: p.fiatBaseUrl, PAYMENTS_CRYPTO_BASE_URL: p.cryptoBaseUrl,
  PAYMENTS_PRODUCTION_API_KEY: DEMO_CREDENTIALS.production.apiKey, PAYMENTS_PRODUCTION_PUBLIC_KEY: DEMO_CREDENTIALS.production.publicKey,
  PAYMENTS_SANDBOX_API_KEY: DEMO_CREDENTIALS.sandbox.apiKey, PAYMENTS_SANDBOX_PUBLIC_KEY: DEMO_CREDENTIALS.sandbox.publicKey,
  PROXY_DEFAULT_ENVIRONMENT: 'sandbox', PROXY_PORT: '0', LOG_LEVEL: 'debug', PROXY_EGRESS_IP_URL: 'off',
})
console.log(warnings)
const { app } = await buildServer(config, { logger: createLogger('debug') })
await app.listen({ host: '127.0.0.1', port: 0 })
const port = (app.server.address() as any).port
for (const path of ['/sandbox/fiat/v1/ping?a=1&b=%20x', '/production/crypto/x', '/fiat/y', '/readyz', '/nope', '/production/fiat/auth/generate-bearer-token', '/production/fiat/%2e%2e/x']) {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'GET', headers: { authorization: 'Bearer evil', 'x-api-key': 'k' } })
  console.log(path, r.status, r.headers.get('x-proxy-error'), (await r.text()).slice(0, 300))
}
const r = await fetch(`http://127.0.0.1:${port}/sandbox/fiat/v1/payouts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 1, externalReference: 'x' }) })
console.log('POST', r.status, (await r.text()).slice(0, 200))
await app.close(); await p.close()
