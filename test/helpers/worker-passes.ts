/**
 * The evidence that a background loop had its chance: its passes, as the product counts them
 * (`worker_passes_total{worker,outcome="done"}`, src/ops/worker-passes.ts). A test that proves
 * something did NOT happen (nothing sent again, nothing notified, logged once) waits until the loop
 * that would have done it has ended two passes after the moment that matters, then asserts: the
 * first of them may have begun before that moment, the second began after the first ended, so
 * whatever the loop does with what its store holds now, it has done. A fixed sleep proves nothing
 * on a loaded machine, where the loop may not have run at all by the time it is over.
 *
 * A loop's pass ends once what it did is done: the approvals' forward loop awaits the provider's
 * answer, every loop awaits the notifications it stores. A delivery attempt, or a payment's
 * look-up, is started in a pass and may still be on its way when the pass ends.
 */
import type { Registry } from 'prom-client'
import type { WorkerName } from '../../src/ops/worker-passes.js'
import { eventually, HANG_MS } from './eventually.js'

export type { WorkerName }

const NAME = 'payments_auth_proxy_worker_passes_total'

/** Reads how many passes a loop has ended, with the outcome `done` (or `failed`, when asked for). */
export type Passes = () => Promise<number>

/** A loop of a proxy (or inbox) built in this process, read from its registry. */
export function passesIn (registry: Registry, worker: WorkerName, outcome: 'done' | 'failed' = 'done'): Passes {
  return async () => {
    const metric = registry.getSingleMetric(NAME)
    if (metric === undefined) return 0
    const { values } = await metric.get()
    return values.find((v) => v.labels['worker'] === worker && v.labels['outcome'] === outcome)?.value ?? 0
  }
}

/** A loop of a process of its own, read from its `/metrics` (`url`: the proxy listener's base). */
export function passesAt (url: string, worker: WorkerName): Passes {
  const line = new RegExp(`^${NAME}\\{worker="${worker}",outcome="done"\\} (\\d+)$`, 'm')
  return async () => {
    const text = await (await fetch(`${url}/metrics`)).text()
    return Number(line.exec(text)?.[1] ?? 0)
  }
}

export interface AfterPassesOptions {
  /** Names the loops in the timeout's message. */
  what?: string
  /** How many passes each loop must end after the call; 2 (see above). */
  passes?: number
  /**
   * Run before each look, so the passes come sooner than the loops' timers bring them: the loop's
   * own wake (what the product calls when there is news: an approval decided, an event stored),
   * or with fake time, moving the clock on so that the timers fire.
   */
  between?: () => Promise<void>
  timeoutMs?: number
}

/** Resolves once each of `loops` has ended `passes` passes (2) after this call. */
export async function afterPasses (loops: Passes | readonly Passes[], options: AfterPassesOptions = {}): Promise<void> {
  const list = Array.isArray(loops) ? loops as readonly Passes[] : [loops as Passes]
  const passes = options.passes ?? 2
  const from = await Promise.all(list.map(async (read) => await read()))
  let seen = from
  await eventually(async () => {
    await options.between?.()
    seen = await Promise.all(list.map(async (read) => await read()))
    return seen.every((n, i) => n >= (from[i] ?? 0) + passes)
  }, {
    what: `${passes} passes of ${options.what ?? 'the loop'} after the moment`,
    timeoutMs: options.timeoutMs ?? HANG_MS,
    everyMs: 50,
    detail: () => `passes from ${from.join(', ')} to ${seen.join(', ')}`,
  })
}
