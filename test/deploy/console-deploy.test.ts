/**
 * The console's deployment examples (deploy/compose-console, deploy/kubernetes/console): behind
 * oauth2-proxy, in a payments-auth-proxy of its own that shares Redis with the application's
 * sidecar, never in the application's network namespace; the console on loopback, believing the
 * sign-in header from loopback only, where only oauth2-proxy runs; every sidecar setting known.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { parse, parseAllDocuments } from 'yaml'
import { KNOWN_VARIABLES } from '../../src/config/schema.js'

interface Service { network_mode?: string, environment?: Record<string, string>, ports?: string[], command?: string[] }
const compose = parse(readFileSync(new URL('../../deploy/compose-console/docker-compose.yml', import.meta.url), 'utf8'), { merge: true }) as { services: Record<string, Service> }

t.test('compose: the console in its own sidecar, oauth2-proxy in its namespace, the application\'s sidecar without it', async (t) => {
  const { services } = compose
  const consoleEnv = services['payments-console']?.environment ?? {}
  t.equal(consoleEnv['PROXY_CONSOLE_LISTEN'], '127.0.0.1:8090', 'the console on loopback')
  t.equal(consoleEnv['PROXY_CONSOLE_TRUSTED_PROXIES'], '127.0.0.1/32')
  t.equal(consoleEnv['PROXY_CONSOLE_ALLOWED_CLIENTS'], '127.0.0.1/32')
  t.match(consoleEnv['PROXY_CONSOLE_PUBLIC_URL'], /^https:\/\//)
  t.equal(services['oauth2-proxy']?.network_mode, 'service:payments-console', 'oauth2-proxy reaches it on loopback')
  t.ok(services['oauth2-proxy']?.command?.includes('--upstream=http://127.0.0.1:8090/'))
  t.equal(services['example-app']?.network_mode, 'service:payments-auth-proxy', 'the application beside its own sidecar')
  t.notOk(Object.keys(services['payments-auth-proxy']?.environment ?? {}).some((k) => k.startsWith('PROXY_CONSOLE_')), 'no console where the application could send the header from loopback')
  t.equal(consoleEnv['PROXY_REDIS_URL'], services['payments-auth-proxy']?.environment?.['PROXY_REDIS_URL'], 'approvals shared through one Redis')
  for (const [name, service] of Object.entries(services)) {
    for (const port of service.ports ?? []) t.match(port, /^127\.0\.0\.1:/, `${name}: ${port} on loopback only`)
    if (name.startsWith('payments-')) t.same(Object.keys(service.environment ?? {}).filter((k) => !KNOWN_VARIABLES.has(k)), [], `${name}: every setting known`)
  }
})

type Doc = Record<string, unknown>
/** The value at a dotted path of a parsed manifest, or undefined. */
function at (value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, key) => (v !== null && typeof v === 'object' ? (v as Doc)[key] : undefined), value)
}

t.test('kubernetes: the console\'s Pod holds oauth2-proxy and the console on loopback, and lets in oauth2-proxy\'s port only', async (t) => {
  const docs = parseAllDocuments(readFileSync(new URL('../../deploy/kubernetes/console/console.yaml', import.meta.url), 'utf8')).map((d) => d.toJS() as Doc)
  const deployment = docs.find((d) => d['kind'] === 'Deployment')
  const containers = at(deployment, 'spec.template.spec.containers') as Array<{ name: string, env?: Array<{ name: string, value?: string }>, args?: string[], ports?: unknown }>
  const sidecar = containers.find((c) => c.name === 'payments-auth-proxy')
  const env = Object.fromEntries((sidecar?.env ?? []).map((e) => [e.name, e.value]))
  t.equal(env['PROXY_CONSOLE_LISTEN'], '127.0.0.1:8090')
  t.equal(env['PROXY_CONSOLE_TRUSTED_PROXIES'], '127.0.0.1/32')
  t.same(Object.keys(env).filter((k) => !KNOWN_VARIABLES.has(k)), [], 'every setting known')
  t.ok('PROXY_REDIS_URL_FILE' in env, 'approvals shared with the application\'s sidecars through Redis')
  t.same(sidecar?.ports, undefined, 'the sidecar exposes no port of its own')
  const oauth2 = containers.find((c) => c.name === 'oauth2-proxy')
  t.ok(oauth2?.args?.includes('--upstream=http://127.0.0.1:8090/'))
  t.same(containers.map((c) => c.name).sort(), ['oauth2-proxy', 'payments-auth-proxy'], 'nothing else in the Pod')
  const policy = docs.find((d) => d['kind'] === 'NetworkPolicy')
  t.same(at(policy, 'spec.ingress.0.ports'), [{ port: 4180 }], 'only oauth2-proxy\'s port')
  const service = docs.find((d) => d['kind'] === 'Service')
  t.same((at(service, 'spec.ports') as Array<{ targetPort: string }>).map((p) => p.targetPort), ['console'])
})
