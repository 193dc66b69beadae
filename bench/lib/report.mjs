/**
 * From raw measurements to the tables: medians over rounds (robust to a neighbour's burst in one
 * round), min–max shown next to them, latency percentiles of all rounds' requests together, ratios
 * of our proxy to the bare framework and to the upstream served directly, and the budget of issue 7
 * next to each figure.
 */

export const BUDGET = { minRatioToBare: 1.0, maxAddedP50Ms: 0.8, maxAddedP99Ms: 3, maxPeakRssMb: 150 }

const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b)
  if (s.length === 0) return null
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}
const max = (xs) => xs.reduce((a, b) => (typeof b === 'number' && (a === null || b > a) ? b : a), null)
const min = (xs) => xs.reduce((a, b) => (typeof b === 'number' && (a === null || b < a) ? b : a), null)
const sum = (xs) => xs.reduce((a, b) => a + (b ?? 0), 0)

/**
 * A latency percentile of all the rounds' requests together, from each round's quantiles at every
 * 0.1% weighted by its request count: a p99 is a statement about every request measured, which the
 * median of per-round p99s is not (it drops the round a GC pause fell in). Null when a round has
 * no quantiles (results from before they were recorded).
 */
export function pooledPercentile (rounds, p) {
  if (rounds.length === 0 || rounds.some((m) => !(m.latencyQuantilesMs?.length > 1))) return null
  const points = rounds.flatMap((m) => m.latencyQuantilesMs.map((ms) => [ms, (m.latencyMs.count ?? m.ok) / m.latencyQuantilesMs.length]))
  points.sort((a, b) => a[0] - b[0])
  const wanted = (p / 100) * points.reduce((total, [, weight]) => total + weight, 0)
  let seen = 0
  for (const [ms, weight] of points) {
    seen += weight
    if (seen >= wanted) return ms
  }
  return points[points.length - 1][0]
}

/** Geometric mean and range of per-round ratios ours/partner req/CPU-s from the paired rounds. */
function pairedRatio (paired, workload, partner) {
  const ratios = paired
    .filter((p) => p.workload === workload && p.partner === partner && p.ours.rpsPerCpuS !== null && p.other.rpsPerCpuS !== null)
    .map((p) => p.ours.rpsPerCpuS / p.other.rpsPerCpuS)
  if (ratios.length === 0) return null
  const round2 = (x) => Math.round(x * 100) / 100
  return { ratio: round2(Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length)), min: round2(min(ratios)), max: round2(max(ratios)), rounds: ratios.length }
}

export function summarise (measurements, workloads, targets, paired = []) {
  const rows = {}
  for (const workload of workloads) {
    rows[workload.name] = {}
    for (const target of targets) {
      const mine = measurements.filter((m) => m.workload === workload.name && m.target === target.name)
      const sat = mine.filter((m) => m.kind === 'saturate')
      const rate = mine.filter((m) => m.kind === 'rate')
      rows[workload.name][target.name] = {
        rps: median(sat.map((m) => m.rps)),
        rpsMin: min(sat.map((m) => m.rps)),
        rpsMax: max(sat.map((m) => m.rps)),
        cpuPct: median(sat.map((m) => m.targetCpuPct)),
        rpsPerCpuS: median(sat.map((m) => m.rpsPerCpuS)),
        loadCoreBusyPct: median(sat.map((m) => m.loadCoreBusyPct)),
        foreignCpuPctMax: max(mine.map((m) => m.foreignCpuPctOnTargetCore)),
        p50Ms: pooledPercentile(rate, 50) ?? median(rate.map((m) => m.latencyMs.p50)),
        p99Ms: pooledPercentile(rate, 99) ?? median(rate.map((m) => m.latencyMs.p99)),
        p99MsWorst: max(rate.map((m) => m.latencyMs.p99)),
        achievedRate: median(rate.map((m) => m.achievedRps)),
        scheduleLagP99Ms: max(rate.map((m) => m.scheduleLagMs?.p99)),
        peakRssMb: Math.round((max(mine.map((m) => m.peakRssKb)) ?? 0) / 1024),
        failures: sum(mine.map((m) => m.non2xx + m.errors)),
        rounds: sat.length,
      }
    }
  }
  const budget = {}
  for (const workload of workloads) {
    const r = rows[workload.name]
    const ours = r.ours
    const ratio = (a, b) => (a === null || b === null || b === 0 ? null : Math.round((a / b) * 100) / 100)
    const diff = (a, b) => (a === null || b === null ? null : Math.round((a - b) * 1000) / 1000)
    budget[workload.name] = {
      oursToBare: ratio(ours.rps, r.bare?.rps ?? null),
      oursToBarePerCpu: ratio(ours.rpsPerCpuS, r.bare?.rpsPerCpuS ?? null),
      oursToBarePaired: pairedRatio(paired, workload.name, 'bare'),
      oursToVariantPaired: r.variant === undefined ? undefined : pairedRatio(paired, workload.name, 'variant'),
      oursToVariantPerCpu: r.variant === undefined ? undefined : ratio(ours.rpsPerCpuS, r.variant.rpsPerCpuS),
      oursToPlain: r.plain === undefined ? undefined : ratio(ours.rps, r.plain.rps),
      oursToVariant: r.variant === undefined ? undefined : ratio(ours.rps, r.variant.rps),
      oursMinusVariantP50Ms: r.variant === undefined ? undefined : diff(ours.p50Ms, r.variant.p50Ms),
      oursToDirect: ratio(ours.rps, r.direct?.rps ?? null),
      addedP50Ms: diff(ours.p50Ms, r.direct?.p50Ms ?? null),
      addedP99Ms: diff(ours.p99Ms, r.direct?.p99Ms ?? null),
      peakRssMb: ours.peakRssMb,
    }
  }
  return { rows, budget }
}

const fmtInt = (x) => (x === null || x === undefined ? '–' : Math.round(x).toLocaleString('en-US'))
const fmtMs = (x) => (x === null || x === undefined ? '–' : x.toFixed(2))
const mark = (ok) => (ok ? '✓' : '✗')
/** An added latency below zero means the direct upstream's own figure was noise: no verdict on it. */
const markAdded = (ms, max) => (ms === null ? '✗' : ms < 0 ? '(direct noisier: not judged)' : mark(ms <= max))
const fmtPaired = (p, atLeast) => (p === null || p === undefined ? '–' : `${p.ratio} (${p.min}–${p.max})${atLeast === undefined ? '' : ` ${mark(p.ratio >= atLeast)}`}`)

export function markdown ({ title, conditions, summary, workloads, targets, tokens, notes }) {
  const out = [`# ${title}`, '']
  out.push('## Conditions', '', ...conditions.map((c) => `- ${c}`), '')
  out.push('## Results', '')
  out.push('req/s: closed loop at saturation, median of the rounds (min–max). CPU: the target process, % of one core, during saturation. req/CPU-s: requests served per CPU-second of the target process at saturation (what a request costs; less sensitive to other processes on the machine than req/s). p50/p99: at a fixed 2,000 req/s (steady pacing), of the requests of all rounds together. Peak RSS: the target process, highest VmHWM over all its measurements.', '')
  out.push('| workload | target | req/s | CPU % | req/CPU-s | p50 ms | p99 ms | peak RSS MB | failed |', '|---|---|---:|---:|---:|---:|---:|---:|---:|')
  for (const workload of workloads) {
    for (const target of targets) {
      const r = summary.rows[workload.name][target.name]
      out.push(`| ${workload.label} | ${target.label} | ${fmtInt(r.rps)} (${fmtInt(r.rpsMin)}–${fmtInt(r.rpsMax)}) | ${fmtInt(r.cpuPct)} | ${fmtInt(r.rpsPerCpuS)} | ${fmtMs(r.p50Ms)} | ${fmtMs(r.p99Ms)} | ${fmtInt(r.peakRssMb)} | ${r.failures} |`)
    }
  }
  out.push('', '## Our proxy against the budget of issue 7', '')
  const plain = targets.some((t) => t.name === 'plain')
  const variant = targets.some((t) => t.name === 'variant')
  out.push('ours/bare req/s and req/CPU-s: medians of the interleaved rounds. Paired: our proxy and the other one saturated at the same time on the same core, geometric mean of the rounds\' ratios of req/CPU-s (min–max): untouched by the machine\'s speed drifting between measurements, but both proxies share the core\'s caches meanwhile, which may weigh more on the larger one.', '')
  out.push(`| workload | ours/bare req/s (≥ ${BUDGET.minRatioToBare.toFixed(1)}) | ours/bare req/CPU-s | ours/bare req/CPU-s, paired (≥ ${BUDGET.minRatioToBare.toFixed(1)}) |${plain ? ' ours/plain req/s |' : ''}${variant ? ' ours/(e) req/s | ours/(e) req/CPU-s | ours/(e) req/CPU-s, paired | ours − (e) p50 ms |' : ''} ours/direct req/s | added p50 (≤ ${BUDGET.maxAddedP50Ms} ms) | added p99 (≤ ${BUDGET.maxAddedP99Ms} ms) | peak RSS (≤ ${BUDGET.maxPeakRssMb} MB) |`)
  out.push(`|---|---:|---:|---:|${plain ? '---:|' : ''}${variant ? '---:|---:|---:|---:|' : ''}---:|---:|---:|---:|`)
  for (const workload of workloads) {
    const b = summary.budget[workload.name]
    const cells = [
      `${b.oursToBare ?? '–'} ${mark(b.oursToBare !== null && b.oursToBare >= BUDGET.minRatioToBare)}`,
      `${b.oursToBarePerCpu ?? '–'}`,
      fmtPaired(b.oursToBarePaired, BUDGET.minRatioToBare),
      ...(plain ? [`${b.oursToPlain ?? '–'}`] : []),
      ...(variant ? [`${b.oursToVariant ?? '–'}`, `${b.oursToVariantPerCpu ?? '–'}`, fmtPaired(b.oursToVariantPaired), fmtMs(b.oursMinusVariantP50Ms)] : []),
      `${b.oursToDirect ?? '–'}`,
      `${fmtMs(b.addedP50Ms)} ${markAdded(b.addedP50Ms, BUDGET.maxAddedP50Ms)}`,
      `${fmtMs(b.addedP99Ms)} ${markAdded(b.addedP99Ms, BUDGET.maxAddedP99Ms)}`,
      `${b.peakRssMb} ${mark(b.peakRssMb <= BUDGET.maxPeakRssMb)}`,
    ]
    out.push(`| ${workload.label} | ${cells.join(' | ')} |`)
  }
  out.push('', '## Token requests (exactly 1 per environment per refresh window)', '')
  if (tokens.skipped) {
    out.push(`Not checked per window: with --restart-each-round every new process asks at its start. ${tokens.ok ? '✓' : '✗'} The upstream saw only valid tokens.`, '')
  } else {
    out.push(`${tokens.ok ? '✓ passed' : '✗ FAILED'}: expected one request at start, then one every ${tokens.expectedGapS[0]}–${tokens.expectedGapS[1]} s; ${tokens.windowsElapsed} refresh intervals elapsed.`, '')
    out.push('| environment | token requests | gaps (s) | problems |', '|---|---:|---|---|')
    for (const [env, e] of Object.entries(tokens.environments)) {
      out.push(`| ${env} | ${e.tokenRequests} | ${e.gapsS.join(', ') || '–'} | ${e.problems.join('; ') || 'none'} |`)
    }
  }
  const u = tokens.upstreamSaw
  out.push('', `Upstream saw: ${fmtInt(u.ok)} authorised requests, ${u.unknownToken} with an unknown token, ${u.expiredToken} with an expired token, ${u.missingAuthorization} without Authorization, ${u.tokenRejected} rejected token requests.`, '')
  if (notes.length > 0) out.push('## Notes', '', ...notes.map((n) => `- ${n}`), '')
  return out.join('\n')
}
