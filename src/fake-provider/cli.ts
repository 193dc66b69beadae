/**
 * Runs the fake provider as its own process: `node dist/fake-provider/cli.js` after `npm run build`
 * (docs/operations.md, "The fake provider alone"), and the compose demo's `fake-provider` service.
 * Configured from FAKE_PROVIDER_* variables; prints one JSON line with the URLs to point the proxy
 * at and the demo credentials it accepts (public test values, useless anywhere else), and stops
 * cleanly on SIGTERM/SIGINT.
 */

import { DEMO_CREDENTIALS, startFakeProvider } from './fake-provider.js'
import { providerPorts } from './provider-ports.js'

function readPositiveInteger (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`)
  return value
}

async function main (): Promise<void> {
  const host = process.env.FAKE_PROVIDER_HOST || '127.0.0.1'
  const provider = await startFakeProvider({
    host,
    advertisedHost: process.env.FAKE_PROVIDER_ADVERTISED_HOST || host,
    ...providerPorts(process.env, { fiatPort: 4010, cryptoPort: 4020, ipEchoPort: 4030 }),
    tokenLifetimeSeconds: readPositiveInteger('FAKE_PROVIDER_TOKEN_LIFETIME_SECONDS', 7200),
  })
  process.stdout.write(`${JSON.stringify({
    msg: 'fake provider listening',
    fiatBaseUrl: provider.fiatBaseUrl,
    fiatSandboxBaseUrl: provider.fiatSandboxBaseUrl,
    cryptoBaseUrl: provider.cryptoBaseUrl,
    cryptoSandboxBaseUrl: provider.cryptoSandboxBaseUrl,
    ipEchoUrl: provider.ipEchoUrl,
    // The proxy's variables for them: PAYMENTS_<ENVIRONMENT>_API_KEY and _PUBLIC_KEY.
    credentials: DEMO_CREDENTIALS,
  })}\n`)

  const stop = (): void => {
    // Servers closed and sockets destroyed leave nothing pending, so the process exits 0 by itself.
    provider.close().catch((err: unknown) => {
      process.stderr.write(`fake provider: close failed: ${String(err)}\n`)
      process.exitCode = 1
    })
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}

main().catch((err: unknown) => {
  process.stderr.write(`fake provider: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = 1
})
