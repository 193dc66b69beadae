import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'
import { parseAllDocuments } from 'yaml'

// `kubectl apply --dry-run` is not available here: the fields that make the sidecar safe are checked by hand.
const dir = new URL('../../deploy/kubernetes/', import.meta.url)
type Doc = Record<string, unknown>
/** The value at a dotted path of a parsed manifest, or undefined. */
function at (value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, key) => (v !== null && typeof v === 'object' ? (v as Doc)[key] : undefined), value)
}
const docs: Doc[] = readdirSync(dir).filter((f) => f.endsWith('.yaml')).flatMap((file) =>
  parseAllDocuments(readFileSync(new URL(file, dir), 'utf8')).map((d) => {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors.map((e) => e.message).join('; ')}`)
    return d.toJS() as Doc
  }).filter((d) => d !== null))

t.test('every manifest parses and names its kind', async (t) => {
  t.ok(docs.length >= 3, `${docs.length} documents`)
  for (const doc of docs) t.type(doc['kind'], 'string', `${String(at(doc, 'metadata.name'))}: kind`)
})

t.test('the proxy is a native sidecar that holds the app back until a token is held', async (t) => {
  const deployment = docs.find((d) => d['kind'] === 'Deployment')
  const spec = at(deployment, 'spec.template.spec')
  const sidecar = (at(spec, 'initContainers') as Doc[]).find((c) => c['name'] === 'payments-auth-proxy') as Doc
  t.ok(sidecar, 'in initContainers')
  t.equal(sidecar['restartPolicy'], 'Always', 'restartPolicy: Always (native sidecar)')
  t.equal(at(sidecar, 'startupProbe.httpGet.path'), '/readyz', 'startupProbe on /readyz')
  t.equal(at(sidecar, 'readinessProbe.httpGet.path'), '/readyz', 'readinessProbe on /readyz')
  t.equal(at(sidecar, 'livenessProbe.httpGet.path'), '/healthz', 'livenessProbe on /healthz: a provider outage never restarts the Pod')
  t.ok(at(sidecar, 'resources.requests.memory') !== undefined && at(sidecar, 'resources.limits.memory') !== undefined, 'memory request and limit')
  t.not(at(sidecar, 'resources.requests.cpu'), undefined, 'cpu request')
  t.equal(at(sidecar, 'securityContext.allowPrivilegeEscalation'), false, 'no privilege escalation')
  t.equal(at(sidecar, 'securityContext.readOnlyRootFilesystem'), true, 'read-only root filesystem')
  t.same(at(sidecar, 'securityContext.capabilities.drop'), ['ALL'], 'all capabilities dropped')
  t.equal(at(spec, 'securityContext.runAsNonRoot'), true, 'non-root')
  t.notOk((at(spec, 'containers') as Doc[]).some((c) => c['name'] === 'payments-auth-proxy'), 'not also a plain container')
  const env = sidecar['env'] as Array<{ name: string, value?: string }>
  for (const name of ['PAYMENTS_PRODUCTION_API_KEY', 'PAYMENTS_PRODUCTION_PUBLIC_KEY']) {
    t.notOk(env.some((e) => e.name === name), `${name} is not in the environment`)
    t.match(env.find((e) => e.name === `${name}_FILE`)?.value ?? '', /^\/var\/run\/secrets\//, `${name}_FILE names a mounted file`)
  }
  t.ok((sidecar['volumeMounts'] as Doc[]).some((m) => m['readOnly'] === true && m['subPath'] === undefined), 'secrets mounted read-only as a directory (no subPath: rotation reaches the file)')
})

t.test('the sidecar\'s policy: egress to the provider, the IP echo service, DNS and Redis; ingress for the metrics scrape only', async (t) => {
  const policies = docs.filter((d) => d['kind'] === 'NetworkPolicy')
  const sidecar = policies.find((d) => at(d, 'metadata.name') === 'payments-auth-proxy-sidecar')
  t.ok(sidecar, 'a NetworkPolicy of the sidecar\'s own')
  t.ok((at(sidecar, 'spec.policyTypes') as string[]).includes('Egress'), 'Egress is a policy type')
  const rules = at(sidecar, 'spec.egress') as Doc[]
  const ports = rules.map((r) => (r['ports'] as Array<{ port: number }>).map((p) => p.port).sort().join(','))
  t.same(ports.sort(), ['443', '443', '53,53', '6379'], 'DNS, the provider, the echo service and Redis (records, limits, the replicas\' shared inbox), nothing else')
  t.ok(rules.every((r) => Array.isArray(r['to']) && (r['to'] as unknown[]).length > 0), 'every egress rule names its destination')
  const ingress = at(sidecar, 'spec.ingress') as Doc[]
  t.same(ingress.map((r) => (r['ports'] as Array<{ port: number }>).map((p) => p.port)), [[8080], [8443]], 'ingress: the proxy\'s port for /metrics, the inbox\'s for the ingress controller')
  t.ok(ingress.every((r) => Array.isArray(r['from']) && (r['from'] as unknown[]).length > 0), 'only from named peers, not from anywhere')
  // Policies selecting one Pod add up: the application's own rules live in a policy of their own.
  const app = policies.find((d) => at(d, 'metadata.name') === 'payments-app')
  t.ok(app, 'the application\'s own policy is shown beside it')
  t.same(at(app, 'spec.podSelector'), at(sidecar, 'spec.podSelector'), 'both select the same Pods')
  t.ok((at(app, 'spec.egress') as Doc[]).length > 0, 'the application keeps egress of its own (its database)')
})
