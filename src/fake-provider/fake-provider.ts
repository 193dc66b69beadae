/**
 * A local stand-in for the payments provider (SPEC §1): fiat and crypto API servers, each serving
 * production and sandbox under the real base paths, plus an IP echo service. Used by the tests, by
 * `npm run demo` and by the compose demo, so the proxy can run end to end without credentials.
 *
 * Token endpoint: `POST {fiat base}/auth/generate-bearer-token` with the environment's `api-key`
 * header and `{"publicKey"}` body returns an HS256 JWT and an integer `expiresAt`. Like the real
 * endpoint it "generates or retrieves": while the current token has more than half of its lifetime
 * left, the same token and expiresAt come back (see token-issuer.ts). Every other path under a base
 * needs that environment's bearer token and answers with an echo of the request, except payouts and
 * transaction look-ups when transactions are on (transactions.ts: the payments of SPEC §12).
 *
 * Times, including every response's `Date` header, come from the `now` option, so a test can give
 * the provider a skewed or fake clock. Request bodies are recorded for tests, never logged.
 */

import { createApiHandler } from './api-server.js'
import type { ApiState } from './api-server.js'
import { closeServer, createServer, listen } from './http-io.js'
import { createIpEchoHandler } from './ip-echo.js'
import type { IpEchoState } from './ip-echo.js'
import { BASE_PATHS } from './paths.js'
import { TokenIssuer } from './token-issuer.js'
import { createTransactions } from './transactions.js'
import type { FakeProvider, FakeProviderOptions } from './types.js'

export type {
  FakeProvider, FakeProviderOptions, ProviderCredentials, ProviderEnvironment, ProviderInterface,
  TokenHandler, TokenRequestRecord, UpstreamHandler, UpstreamRequestRecord,
} from './types.js'

/** Not secrets: they only open the fake provider. */
export const DEMO_CREDENTIALS = {
  production: { apiKey: 'HC_demo_production_api_key_0001', publicKey: 'pk_demo_production_0001' },
  sandbox: { apiKey: 'HC_demo_sandbox_api_key_0001', publicKey: 'pk_demo_sandbox_0001' },
} as const

const DEFAULT_TOKEN_LIFETIME_SECONDS = 7200
const DEFAULT_EGRESS_IP = '203.0.113.7'

export async function startFakeProvider (opts: FakeProviderOptions = {}): Promise<FakeProvider> {
  const host = opts.host ?? '127.0.0.1'
  const now = opts.now ?? Date.now
  const defaultLifetime = opts.tokenLifetimeSeconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS
  const defaultEgressIp = opts.egressIp ?? DEFAULT_EGRESS_IP

  const issuer = new TokenIssuer(now, defaultLifetime)
  const api: ApiState = {
    now,
    credentials: { ...(opts.credentials ?? DEMO_CREDENTIALS) },
    issuer,
    tokenRequests: [],
    upstreamRequests: [],
    ipAllowlistEnforced: false,
    tokenHandler: null,
    upstreamHandler: null,
    transactions: createTransactions(now),
  }
  api.transactions.configure(opts.transactions ?? null)
  const ipEcho: IpEchoState = { egressIp: defaultEgressIp, requests: 0 }

  const servers = [
    createServer(createApiHandler('fiat', api), now),
    createServer(createApiHandler('crypto', api), now),
    createServer(createIpEchoHandler(ipEcho), now),
  ] as const
  const close = async (): Promise<void> => {
    api.transactions.close()
    await Promise.all(servers.map(closeServer))
  }

  let ports: number[]
  try {
    ports = await Promise.all([
      listen(servers[0], opts.fiatPort ?? 0, host),
      listen(servers[1], opts.cryptoPort ?? 0, host),
      listen(servers[2], opts.ipEchoPort ?? 0, host),
    ])
  } catch (err) {
    await close()
    throw err
  }
  const [fiatPort, cryptoPort, ipEchoPort] = ports as [number, number, number]
  const advertisedHost = opts.advertisedHost ?? host
  const fiatOrigin = origin(advertisedHost, fiatPort)
  const cryptoOrigin = origin(advertisedHost, cryptoPort)

  return {
    fiatOrigin,
    cryptoOrigin,
    ipEchoUrl: `${origin(advertisedHost, ipEchoPort)}/ip`,
    fiatBaseUrl: fiatOrigin + BASE_PATHS.fiat.production,
    cryptoBaseUrl: cryptoOrigin + BASE_PATHS.crypto.production,
    fiatSandboxBaseUrl: fiatOrigin + BASE_PATHS.fiat.sandbox,
    cryptoSandboxBaseUrl: cryptoOrigin + BASE_PATHS.crypto.sandbox,
    tokenRequests: api.tokenRequests,
    upstreamRequests: api.upstreamRequests,
    get ipEchoRequests () { return ipEcho.requests },
    issuedTokens: issuer.issuedTokens,
    setEgressIp (ip) { ipEcho.egressIp = ip },
    setIpAllowlistEnforced (on) { api.ipAllowlistEnforced = on },
    setTokenLifetime (seconds) { issuer.setLifetime(seconds) },
    setCredentials (environment, credentials) { api.credentials[environment] = credentials },
    revokeAllTokens () { issuer.revokeAll() },
    setTokenHandler (fn) { api.tokenHandler = fn },
    setUpstreamHandler (fn) { api.upstreamHandler = fn },
    transactions: api.transactions,
    reset () {
      // Emptied in place: tests may hold references to these arrays.
      api.tokenRequests.length = 0
      api.upstreamRequests.length = 0
      ipEcho.requests = 0
      ipEcho.egressIp = defaultEgressIp
      api.ipAllowlistEnforced = false
      api.tokenHandler = null
      api.upstreamHandler = null
      api.transactions.configure(opts.transactions ?? null)
      issuer.setLifetime(defaultLifetime)
    },
    close,
  }
}

function origin (host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}
