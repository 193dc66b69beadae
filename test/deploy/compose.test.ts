import { readFileSync } from 'node:fs'
import t from 'tap'
import { parse } from 'yaml'
import { KNOWN_VARIABLES } from '../../src/config/schema.js'

// The container test runs the demo profile; these are the properties of every profile that a run
// here cannot show (the replicas profile needs a Redis image this machine cannot pull).
interface Service { profiles?: string[], image?: string, ports?: string[], command?: string[], environment?: Record<string, string>, depends_on?: string[] }
const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), { merge: true }) as { services: Record<string, Service> }
const services = Object.entries(compose.services)
const sidecars = services.filter(([, s]) => s.environment?.['PAYMENTS_FIAT_BASE_URL'] !== undefined)

t.test('every service names a profile, so a bare `up` starts nothing half-configured', async (t) => {
  for (const [name, service] of services) t.ok((service.profiles ?? []).length > 0, `${name}: profiles`)
})

t.test('every sidecar setting is one the proxy knows, and every published port is on 127.0.0.1', async (t) => {
  t.ok(sidecars.length >= 4, `${sidecars.length} sidecars`)
  for (const [name, service] of sidecars) {
    const unknown = Object.keys(service.environment ?? {}).filter((k) => !KNOWN_VARIABLES.has(k))
    t.same(unknown, [], `${name}: no unknown setting`)
    for (const port of service.ports ?? []) t.match(port, /^127\.0\.0\.1:/, `${name}: ${port} on loopback only`)
  }
})

t.test('replicas: two sidecars share one Redis that refuses writes rather than evicting a record', async (t) => {
  const inProfile = services.filter(([, s]) => s.profiles?.includes('replicas'))
  const replicas = inProfile.filter(([, s]) => s.environment?.['PROXY_REDIS_URL'] !== undefined)
  t.equal(replicas.length, 2, 'two sidecars')
  t.equal(new Set(replicas.map(([, s]) => s.environment?.['PROXY_REDIS_URL'])).size, 1, 'the same PROXY_REDIS_URL')
  t.equal(new Set(replicas.map(([, s]) => s.ports?.[0])).size, 2, 'each on its own host port')
  const redisHost = new URL(replicas[0]?.[1].environment?.['PROXY_REDIS_URL'] ?? '').hostname
  const redis = compose.services[redisHost]
  t.ok(redis?.profiles?.includes('replicas'), `the Redis service "${redisHost}" is in the profile`)
  t.same(redis?.ports, undefined, 'Redis publishes no port')
  t.match(redis?.command?.join(' '), /--maxmemory-policy noeviction/, 'noeviction')
  for (const [name, service] of replicas) t.ok(service.depends_on?.includes(redisHost), `${name} starts after Redis`)
  t.ok(inProfile.some(([name]) => name === 'fake-provider'), 'the fake provider, so the profile needs no credentials')
})
