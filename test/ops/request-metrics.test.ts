import t from 'tap'
import { Counter, Histogram, Registry } from 'prom-client'
import { RequestMetrics } from '../../src/ops/request-metrics.js'

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const NAMES = {
  requestsName: 'x_requests_total',
  requestsHelp: 'Proxied requests by environment, interface and response status class',
  durationName: 'x_upstream_duration_seconds',
  durationHelp: 'Time from forwarding a request to the end of its response',
}

/** prom-client's own Counter and Histogram, fed the same requests: the reference exposition. */
function reference (registry: Registry): (environment: string, iface: string, status: number, seconds: number, caller: string) => void {
  const requests = new Counter({ name: NAMES.requestsName, help: NAMES.requestsHelp, labelNames: ['environment', 'interface', 'status_class', 'caller'], registers: [registry] })
  const duration = new Histogram({ name: NAMES.durationName, help: NAMES.durationHelp, labelNames: ['environment', 'interface'], buckets: BUCKETS, registers: [registry] })
  return (environment, iface, status, seconds, caller) => {
    requests.inc({ environment, interface: iface, status_class: `${Math.floor(status / 100)}xx`, caller })
    duration.observe({ environment, interface: iface }, seconds)
  }
}

const lines = async (registry: Registry): Promise<string[]> => (await registry.metrics()).split('\n').filter((l) => l !== '').sort()

t.test('the exposition is the one prom-client gives for the same requests', async (t) => {
  const ours = new Registry()
  const theirs = new Registry()
  const metrics = new RequestMetrics({ registry: ours, buckets: BUCKETS, ...NAMES })
  const record = reference(theirs)
  t.same(await lines(ours), await lines(theirs), 'before any request')

  // Every bound exactly (a value equal to a bound falls in that bucket), between bounds, past the
  // last one, zero; several series and status classes, interleaved.
  const values = [0, 0.0001, ...BUCKETS, ...BUCKETS.map((b) => b * 1.5), 31, 1000]
  const series: Array<[string, string]> = [['sandbox', 'fiat'], ['production', 'crypto'], ['sandbox', 'crypto'], ['production', 'fiat']]
  const statuses = [200, 201, 304, 401, 404, 502, 504, 101]
  values.forEach((seconds, i) => {
    const [environment, iface] = series[i % series.length] as [string, string]
    const status = statuses[i % statuses.length] as number
    const caller = ['anonymous', 'payout-agent', 'ledger'][i % 3] as string
    metrics.record(environment, iface, status, seconds, caller)
    record(environment, iface, status, seconds, caller)
  })
  const after = await lines(ours)
  t.same(after, await lines(theirs), 'after requests in four series')
  t.ok(after.some((l) => l.startsWith('x_upstream_duration_seconds_bucket{le="0.005",environment="sandbox",interface="fiat"}')), 'buckets exposed')
  t.ok(after.some((l) => /^x_requests_total\{environment="production",interface="crypto",status_class="2xx",caller="[a-z-]+"\} \d+$/.test(l)), 'counts exposed')

  t.same(await lines(ours), await lines(theirs), 'a second scrape does not count twice')
})
