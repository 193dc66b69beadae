/**
 * Preloaded into the sidecar by bench/webhooks.mjs (`node --import`): what its main thread's event
 * loop went through between two readings, so each phase of the bench can say how late the loop was.
 * The main thread only (a worker thread the sidecar starts loads this too, and records nothing).
 *
 * - event-loop delay: `perf_hooks.monitorEventLoopDelay` at 1 ms resolution (a timer every
 *   millisecond; how late it fired is the delay any callback would have had at that moment);
 * - event-loop utilisation (the share of the time the loop was busy, not waiting for I/O);
 * - garbage collection: count, total and longest pause, by kind.
 *
 * SIGWINCH (a signal nothing else in the sidecar listens to: close-with-grace takes SIGUSR2) appends one JSON line to BENCH_PROBE_FILE with what was seen since the previous signal
 * (or the start), then starts again from zero. Nothing is recorded without BENCH_PROBE_FILE.
 */
import { appendFileSync } from 'node:fs'
import { constants, monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks'
import { isMainThread } from 'node:worker_threads'

const file = process.env.BENCH_PROBE_FILE
if (isMainThread && file !== undefined && file !== '') {
  const GC_KINDS = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak' }
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  let gc = {}
  let elu = performance.eventLoopUtilization()
  let since = performance.now()
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = GC_KINDS[entry.detail?.kind] ?? 'other'
      const k = (gc[kind] ??= { count: 0, ms: 0, maxMs: 0 })
      k.count++
      k.ms += entry.duration
      k.maxMs = Math.max(k.maxMs, entry.duration)
    }
  }).observe({ entryTypes: ['gc'] })
  process.on('SIGWINCH', () => {
    const ms = (ns) => Math.round(ns / 1e4) / 100
    const now = performance.now()
    const line = {
      seconds: Math.round(now - since) / 1000,
      loopDelayMs: { p50: ms(delay.percentile(50)), p90: ms(delay.percentile(90)), p99: ms(delay.percentile(99)), p999: ms(delay.percentile(99.9)), max: ms(delay.max), samples: delay.count },
      utilisation: Math.round(performance.eventLoopUtilization(elu).utilization * 1000) / 1000,
      gc,
    }
    appendFileSync(file, `${JSON.stringify(line)}\n`)
    delay.reset()
    gc = {}
    elu = performance.eventLoopUtilization()
    since = now
  })
}
