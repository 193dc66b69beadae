/**
 * One measurement: a load generator process on the load core against one target, with the
 * target's peak RSS and what the cores did meanwhile (from /proc/stat and /proc/<pid>/stat), so a
 * noisy neighbour or a saturated load generator is visible in the results instead of hidden in them.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { run, watchPeakRss } from './processes.mjs'

const LOAD = fileURLToPath(new URL('../load.mjs', import.meta.url))
const WRK_SCRIPT = fileURLToPath(new URL('./wrk-report.lua', import.meta.url))

export function wrkVersion () {
  try {
    return execFileSync('wrk', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).split(' ').slice(0, 2).join(' ')
  } catch (err) {
    // wrk prints its version and usage, then exits 1.
    const out = `${err.stdout ?? ''}`.split('\n')[0].trim()
    return out.startsWith('wrk') ? out.split(' ').slice(0, 2).join(' ') : null
  }
}

/** Per-core busy ticks (USER_HZ) from /proc/stat. */
function coreTicks () {
  const cores = {}
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const m = line.match(/^cpu(\d+) (.*)$/)
    if (m === null) continue
    const v = m[2].trim().split(/\s+/).map(Number)
    const idle = v[3] + (v[4] ?? 0)
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0)
    cores[m[1]] = { busy: total - idle, total }
  }
  return cores
}

function processTicks (pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12]) // utime + stime, all threads
  } catch {
    return null
  }
}

/**
 * `request`: { url, method, headers, body, bodyFile }. `kind`: 'saturate' | 'rate'.
 * Returns the load generator's result plus peakRssKb, targetCpuPct, foreignCpuPctOnTargetCore,
 * loadCoreBusyPct.
 */
export async function measure ({ kind, tool, request, connections, durationS, rate, warmupS, loadCore, targetCore, targetPid }) {
  const rss = watchPeakRss(targetPid)
  const cpuBefore = coreTicks()
  const procBefore = processTicks(targetPid)
  const t0 = performance.now()
  const result = await load({ kind, tool, request, connections, durationS, rate, warmupS, loadCore })
  const elapsedTicks = ((performance.now() - t0) / 1000) * 100
  const cpuAfter = coreTicks()
  const procAfter = processTicks(targetPid)
  const busyPct = (core) => core === null || cpuAfter[core] === undefined ? null : Math.round((100 * (cpuAfter[core].busy - cpuBefore[core].busy)) / (cpuAfter[core].total - cpuBefore[core].total))
  const targetCpuPct = procBefore === null || procAfter === null ? null : Math.round((100 * (procAfter - procBefore)) / elapsedTicks)
  const targetBusy = busyPct(targetCore)
  const served = result.ok + (result.non2xx ?? 0)
  return {
    ...result,
    // Requests per CPU-second of the target process: what a request costs, robust to other
    // processes taking the core for a while (time they take is not counted against the target).
    rpsPerCpuS: kind === 'saturate' && procBefore !== null && procAfter !== null && procAfter > procBefore ? Math.round(served / ((procAfter - procBefore) / 100)) : null,
    peakRssKb: rss.stop(),
    targetCpuPct,
    targetCoreBusyPct: targetBusy,
    // What else ran on the target's core: other engineers' jobs, not us.
    foreignCpuPctOnTargetCore: targetBusy === null || targetCpuPct === null ? null : Math.max(0, targetBusy - targetCpuPct),
    loadCoreBusyPct: busyPct(loadCore),
  }
}

/**
 * Two targets saturated at the same time, each by its own load generator, while they share the
 * target core: both see the same machine, so the ratio of their CPU cost per request does not
 * drift with the machine's speed the way two measurements taken one after the other do.
 * `runs`: [{ request, targetPid }, { request, targetPid }]; returns each one's served requests,
 * CPU-seconds and req/CPU-s.
 */
export async function measurePaired ({ tool, runs, connections, durationS, loadCore }) {
  const before = runs.map((r) => processTicks(r.targetPid))
  const results = await Promise.all(runs.map((r) => load({ kind: 'saturate', tool, request: r.request, connections, durationS, loadCore })))
  const after = runs.map((r) => processTicks(r.targetPid))
  return results.map((result, i) => {
    const cpuS = before[i] === null || after[i] === null ? null : (after[i] - before[i]) / 100
    const served = result.ok + (result.non2xx ?? 0)
    return { ok: result.ok, non2xx: result.non2xx ?? 0, errors: result.errors ?? 0, served, cpuS, rpsPerCpuS: cpuS === null || cpuS === 0 ? null : Math.round(served / cpuS) }
  })
}

async function load ({ kind, tool, request, connections, durationS, rate, warmupS = 0, loadCore }) {
  if (kind === 'saturate' && tool === 'wrk') return runWrk(request, connections, durationS, loadCore)
  if (kind === 'rate' && tool === 'wrk') {
    // Same schedule, not recorded: the target's first answers on new connections are not what is
    // measured. Its failures still count.
    const warm = warmupS > 0 ? await runWrk(request, connections, warmupS, loadCore, rate) : null
    const result = await runWrk(request, connections, durationS, loadCore, rate)
    return warm === null ? result : { ...result, non2xx: result.non2xx + warm.non2xx, errors: result.errors + warm.errors }
  }
  const spec = { mode: kind, url: request.url, method: request.method, headers: request.headers, body: request.body, uniqueIds: request.uniqueIds, connections, durationS, rate, warmupS }
  const out = await run('load generator', process.execPath, [LOAD, JSON.stringify(spec)], { core: loadCore, timeoutMs: (warmupS + durationS + 30) * 1000 })
  return JSON.parse(out.trim().split('\n').pop())
}

/** `rate`: paced at that many requests per second (wrk-report.lua); closed loop without it. `session`: lib/processes.mjs's start(). */
export async function runWrk (request, connections, durationS, loadCore, rate = null, { session = false } = {}) {
  const env = {
    PATH: process.env.PATH,
    BENCH_METHOD: request.method,
    BENCH_AUTH: request.headers.authorization ?? '',
    BENCH_BODY_FILE: request.bodyFile ?? '',
    BENCH_HEADERS: Object.entries(request.headers).filter(([name]) => name !== 'authorization' && name !== 'content-type').map(([name, value]) => `${name}: ${value}`).join('\n'),
    ...(request.uniqueIds === true ? { BENCH_UNIQUE_IDS: randomUUID() } : {}),
    ...(rate === null ? {} : { BENCH_RATE: String(rate) }),
  }
  const args = ['-t1', `-c${connections}`, `-d${durationS}s`, '--timeout', '5s', '-s', WRK_SCRIPT, request.url]
  const out = await run('wrk', 'wrk', args, { core: loadCore, env, session, timeoutMs: (durationS + 30) * 1000 })
  const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '))
  if (line === undefined) throw new Error(`wrk printed no result:\n${out}`)
  const r = JSON.parse(line.slice('BENCH_JSON '.length))
  const durationSeconds = r.duration_us / 1e6
  const errors = r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout
  const ok = r.requests - r.errors.status
  const paced = rate === null ? {} : {
    rate,
    achievedRps: Math.round(r.requests / durationSeconds),
    scheduleLagMs: { p50: r.lag_ms.p50, p99: r.lag_ms.p99, max: r.lag_ms.max },
    lateSends: r.lag_ms.late,
    latencyQuantilesMs: r.quantiles_us.map((us) => us / 1000),
  }
  return {
    tool: rate === null ? 'wrk' : 'wrk-paced',
    ...paced,
    ok,
    non2xx: r.errors.status,
    errors,
    timeouts: r.errors.timeout,
    durationS: Math.round(durationSeconds * 1000) / 1000,
    rps: Math.round(ok / durationSeconds),
    bytesPerS: Math.round(r.bytes / durationSeconds),
    latencyMs: { p50: r.latency_us.p50 / 1000, p90: r.latency_us.p90 / 1000, p99: r.latency_us.p99 / 1000, p999: r.latency_us.p999 / 1000, max: r.latency_us.max / 1000 },
  }
}

/** Writes the POST body where wrk can read it. */
export function writeBodyFile (path, body) {
  writeFileSync(path, body)
  return path
}
