/**
 * The load generator, one process per measurement (pinned by run.mjs to the load core). Takes one
 * JSON argument, prints one JSON line with the result.
 *
 * mode "saturate": autocannon, closed loop, `connections` keep-alive connections for `durationS`.
 *
 * mode "rate": a fixed arrival rate over `connections` keep-alive connections (undici Clients,
 * round robin, as wrk2 paces each connection), latency measured per request with sub-millisecond
 * resolution from the moment the request is handed to the client to the last body byte. Not
 * autocannon's `-R`: it records latency in whole milliseconds (its HDR histogram's lowest
 * discernible value is 1 ms, so 0.4 ms is recorded as 0) and it paces by sending each connection's
 * whole per-second quota back to back at the top of every second, which measures a 50-connection
 * burst, not a steady 2,000 req/s. The schedule lag (how late a send was against its slot) is
 * reported so an overloaded client shows up instead of hiding in the numbers. The first
 * `warmupS` seconds run on the same schedule but are not recorded: this process starts cold for
 * every measurement, and until V8 has compiled undici's paths its own delays (p50 of 4-27 ms in
 * the first quarter second, measured against the bench upstream) made the p99 of a 3 s
 * measurement the load generator's start-up, not the target's.
 */
import './lib/orphan-guard.mjs'
import { randomUUID } from 'node:crypto'
import { Client } from 'undici'
import autocannon from 'autocannon'

const opts = JSON.parse(process.argv[2])
const { url, method = 'GET', headers = {}, body = null, uniqueIds = false, connections = 50, durationS = 5 } = opts
/** With uniqueIds, every request's body gets a new id for `[<id>]` (a new transaction each). */
const runId = randomUUID()
let sequence = 0
const bodyOf = () => body === null || !uniqueIds ? body : body.replaceAll('[<id>]', `${runId}-${++sequence}`)

const round3 = (x) => Math.round(x * 1000) / 1000
const sortedOf = (samples, count) => Float64Array.prototype.slice.call(samples, 0, count).sort()
const at = (sorted, p) => sorted.length === 0 ? null : round3(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))])

function percentiles (sorted) {
  return { count: sorted.length, p50: at(sorted, 50), p90: at(sorted, 90), p99: at(sorted, 99), p999: at(sorted, 99.9), max: at(sorted, 100) }
}

/** The quantiles at every 0.1%, as wrk-report.lua gives them: rounds are pooled from these. */
const quantiles = (sorted) => sorted.length === 0 ? [] : Array.from({ length: 1001 }, (_, i) => at(sorted, i / 10))

async function saturate () {
  let samples = new Float64Array(1 << 16)
  let count = 0
  const instance = autocannon({ url, method, headers, body: body ?? undefined, idReplacement: uniqueIds, connections, duration: durationS, pipelining: 1 })
  instance.on('response', (_client, statusCode, _bytes, ms) => {
    if (statusCode < 200 || statusCode > 299) return
    if (count === samples.length) { const bigger = new Float64Array(samples.length * 2); bigger.set(samples); samples = bigger }
    samples[count++] = ms
  })
  const result = await instance
  return {
    tool: 'autocannon',
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
    rps: Math.round(result['2xx'] / result.duration),
    bytesPerS: Math.round(result.throughput.total / result.duration),
    latencyMs: percentiles(sortedOf(samples, count)),
  }
}

function once (client, payload) {
  return new Promise((resolve) => {
    const started = performance.now()
    client.request({ path: payload.path, method, headers, body: bodyOf() }).then(async ({ statusCode, body: stream }) => {
      let bytes = 0
      for await (const chunk of stream) bytes += chunk.length
      resolve({ statusCode, bytes, ms: performance.now() - started })
    }, (err) => { resolve({ error: err.code ?? err.message, ms: performance.now() - started }) })
  })
}

async function fixedRate () {
  const { rate, warmupS = 0 } = opts
  const target = new URL(url)
  const payload = { path: target.pathname + target.search }
  const clients = Array.from({ length: connections }, () => new Client(target.origin, { pipelining: 1, keepAliveTimeout: 60_000 }))
  // Open and warm every connection before the clock starts: connection set-up is not what is measured.
  await Promise.all(clients.map((c) => once(c, payload)))

  const warm = Math.round(rate * warmupS)
  const total = warm + Math.round(rate * durationS)
  const latency = new Float64Array(total - warm)
  const lag = new Float64Array(total - warm)
  // Failures count from the first request on; latency and lag only after the warm-up.
  let done = 0
  let ok = 0
  let non2xx = 0
  let errors = 0
  let sent = 0
  let recorded = 0
  const intervalMs = 1000 / rate
  const t0 = performance.now()
  const measuredFrom = t0 + warm * intervalMs
  await new Promise((resolve) => {
    const finish = () => { if (done === total) resolve() }
    const tick = () => {
      const now = performance.now()
      while (sent < total && t0 + sent * intervalMs <= now) {
        const measured = sent >= warm
        if (measured) lag[sent - warm] = now - (t0 + sent * intervalMs)
        once(clients[sent % connections], payload).then((r) => {
          done++
          if (r.error !== undefined) errors++
          else if (r.statusCode >= 200 && r.statusCode <= 299) {
            ok++
            if (measured) latency[recorded++] = r.ms
          } else non2xx++
          finish()
        })
        sent++
      }
      if (sent < total) setTimeout(tick, Math.max(0, t0 + sent * intervalMs - performance.now()))
    }
    tick()
  })
  const elapsedS = (performance.now() - measuredFrom) / 1000
  await Promise.all(clients.map((c) => c.close()))
  const sortedLatency = sortedOf(latency, recorded)
  return {
    tool: 'undici-paced',
    rate,
    ok,
    non2xx,
    errors,
    warmupS,
    durationS: round3(elapsedS),
    achievedRps: Math.round((total - warm) / elapsedS),
    latencyMs: percentiles(sortedLatency),
    latencyQuantilesMs: quantiles(sortedLatency),
    scheduleLagMs: percentiles(sortedOf(lag, total - warm)),
  }
}

const result = opts.mode === 'rate' ? await fixedRate() : await saturate()
process.stdout.write(`${JSON.stringify(result)}\n`)
process.exit(0)
