/**
 * Preloaded into the sidecar by bench/webhooks.mjs (`node --import`, which worker threads inherit):
 * what an event loop went through between two readings, so each phase of the bench says how late the
 * loops were. Two loops are read: the main thread's (the proxy's, and before issue 46 the inbox's
 * too) and, when the inbox runs in a thread of its own, that thread's. Other threads record nothing.
 *
 * - event-loop delay: `perf_hooks.monitorEventLoopDelay` at 1 ms resolution (a timer every
 *   millisecond; how late it fired is the delay any callback would have had at that moment);
 * - event-loop utilisation (the share of the time the loop was busy, not waiting for I/O);
 * - garbage collection of that thread's heap: count, total and longest pause, by kind.
 *
 * SIGWINCH (a signal nothing else in the sidecar listens to: close-with-grace takes SIGUSR2) makes
 * the main thread ask the inbox's thread for its figures (a BroadcastChannel), then append one JSON
 * line `{ main, inbox? }` to BENCH_PROBE_FILE with what each saw since the previous signal; both
 * then start again from zero. Nothing is recorded without BENCH_PROBE_FILE.
 */
import { appendFileSync } from 'node:fs'
import { constants, monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks'
import { BroadcastChannel, isMainThread, workerData } from 'node:worker_threads'

const file = process.env.BENCH_PROBE_FILE
// The inbox's thread is started with its settings and log level (src/webhooks/inbox-thread-serve.ts).
const role = isMainThread ? 'main' : (workerData?.settings !== undefined && workerData?.logLevel !== undefined ? 'inbox' : null)
const GC_KINDS = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak' }

/** This thread's figures since the last take(), and a fresh start. */
function recorder () {
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
  const ms = (ns) => Math.round(ns / 1e4) / 100
  return () => {
    const now = performance.now()
    const figures = {
      seconds: Math.round(now - since) / 1000,
      loopDelayMs: { p50: ms(delay.percentile(50)), p90: ms(delay.percentile(90)), p99: ms(delay.percentile(99)), p999: ms(delay.percentile(99.9)), max: ms(delay.max), samples: delay.count },
      utilisation: Math.round(performance.eventLoopUtilization(elu).utilization * 1000) / 1000,
      gc,
    }
    delay.reset()
    gc = {}
    elu = performance.eventLoopUtilization()
    since = now
    return figures
  }
}

if (file !== undefined && file !== '' && role !== null) {
  const take = recorder()
  const channel = new BroadcastChannel('bench-loop-probe')
  channel.unref()
  if (role === 'inbox') {
    channel.onmessage = ({ data }) => { if (data === 'report') channel.postMessage({ inbox: take() }) }
  } else {
    process.on('SIGWINCH', () => {
      const line = { main: take() }
      const write = () => {
        channel.onmessage = null
        appendFileSync(file, `${JSON.stringify(line)}\n`)
      }
      // No inbox thread (an earlier build, or the inbox off): the main thread's figures alone.
      const alone = setTimeout(write, 300)
      channel.onmessage = ({ data }) => {
        if (data?.inbox === undefined) return
        clearTimeout(alone)
        line.inbox = data.inbox
        write()
      }
      channel.postMessage('report')
    })
  }
}
