import t from 'tap'
import { exchange } from './raw-client.js'
import { startRig } from './rig.js'

// A seeded random path fuzzer (issue 23), judged by what the provider's servers received: a
// request never leaves its route's base, never reaches another environment's base, never reaches
// the token endpoint, and the proxy answers no 5xx of its own. PAP_FUZZ_PATHS=50000 for a long run.
const COUNT = Number(process.env['PAP_FUZZ_PATHS'] ?? 3000)
const SEED = Number(process.env['PAP_FUZZ_SEED'] ?? 20261125)

/** mulberry32: small, seedable, good enough to pick tokens. */
function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let r = Math.imul(a ^ (a >>> 15), 1 | a)
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296
  }
}

const PREFIXES: Array<[string, 'production' | 'sandbox', 'fiat' | 'crypto']> = [
  ['/production/fiat', 'production', 'fiat'], ['/sandbox/fiat', 'sandbox', 'fiat'],
  ['/production/crypto', 'production', 'crypto'], ['/sandbox/crypto', 'sandbox', 'crypto'],
  // The rig's default environment is sandbox.
  ['/fiat', 'sandbox', 'fiat'], ['/crypto', 'sandbox', 'crypto'],
]
const TOKENS = [
  '..', '.', '%2e%2e', '%2E%2e', '.%2e', '%252e%252e', '%2f', '%2F', '%5c', '\\', '', 'sandbox', '%73andbox', 'SANDBOX',
  'Sandbox%2f', 'b2b', 'api', 'auth', '%61uth', 'AUTH', 'generate-bearer-token', 'generate-bearer-token;x', '%67enerate-bearer-token',
  'v1', 'payouts', 'balances', 'Payouts', '%70ayouts', 'wallet_1', 'x-y', 'V2', '%00', '%0d%0a', ';x', '%zz', '%', '%ef%bc%8e%ef%bc%8e', '~', 'x', '%252f', '127.0.0.1:1', '@evil',
]
const BASES: Record<string, Record<string, string>> = {
  production: { fiat: '/api/b2b', crypto: '/api' },
  sandbox: { fiat: '/api/sandbox/b2b', crypto: '/api/sandbox' },
}

t.test(`${COUNT} seeded random paths after every route prefix: nothing leaves its base or its environment, nothing reaches the token endpoint`, async (t) => {
  const rig = await startRig(t)
  const random = prng(SEED)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  const problems: string[] = []
  let forwarded = 0
  for (let i = 0; i < COUNT; i++) {
    const [prefix, environment, iface] = pick(PREFIXES)
    const segments = Array.from({ length: 1 + Math.floor(random() * 5) }, () => pick(TOKENS))
    const target = `${prefix}/${segments.join(random() < 0.1 ? '//' : '/')}`
    rig.provider.upstreamRequests.length = 0
    const res = await exchange(rig.proxy.port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
    const base = BASES[environment]?.[iface] as string
    if (rig.provider.upstreamRequests.length > 0) forwarded++
    for (const received of rig.provider.upstreamRequests) {
      if (received.server !== iface || received.environment !== environment) problems.push(`${target}: reached ${received.server} ${String(received.environment)} (${received.url})`)
      const path = received.url.split('?')[0] ?? ''
      if (path !== base && !path.startsWith(`${base}/`)) problems.push(`${target}: left its base (${received.url})`)
      if (environment === 'production' && iface === 'crypto' && /^\/api\/sandbox(\/|$)/i.test(path)) problems.push(`${target}: production token on the sandbox base (${received.url})`)
    }
    if (res.status >= 500 && res.headers['x-proxy-error'] !== undefined) problems.push(`${target}: the proxy's own ${res.status} ${res.headers['x-proxy-error']}`)
    if (rig.provider.tokenRequests.length !== rig.startupTokenRequests) problems.push(`${target}: a token request (${rig.provider.tokenRequests.length - rig.startupTokenRequests} beyond start-up)`)
    if (problems.length > 20) break
  }
  t.same(problems, [], `seed ${SEED}: no path crossed a boundary`)
  // The checks above run on what was forwarded: a proxy that refused everything would pass them.
  t.comment(`${forwarded} of ${COUNT} fuzzed paths were forwarded`)
  t.ok(forwarded >= COUNT / 10, `a good share of the fuzzed paths was forwarded and judged (${forwarded} of ${COUNT})`)
  t.ok(forwarded < COUNT, 'and some were refused')
})
