/**
 * When the proxy last forwarded (src/ops/proxy-activity.ts): read as an idle time by another thread
 * through the shared buffer (a real worker thread here), long ago before anything was forwarded,
 * across the 32-bit wrap of the stamp, and negative after a wall-clock step back.
 */
import t from 'tap'
import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import { systemClock } from '../../src/clock.js'
import { createProxyActivity, proxyIdleMs } from '../../src/ops/proxy-activity.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { ACTIVITY_READER } from './activity-reader-worker.js'

t.test('idle time since the last forwarded request, through the shared buffer', async (t) => {
  const clock = new FakeClock()
  const activity = createProxyActivity(clock)
  const idle = proxyIdleMs(activity.buffer, clock)
  t.ok(idle() > 1_000_000, 'nothing forwarded yet: long ago')
  activity.forwarded()
  await clock.advance(250)
  t.equal(idle(), 250)
  activity.forwarded()
  t.equal(idle(), 0)
  clock.jumpWall(-10_000)
  t.ok(idle() < 0, 'a wall clock stepped back: negative, which the pacing reads as idle')
})

t.test('the stamp wraps at 32 bits and the idle time does not see it', async (t) => {
  const clock = new FakeClock(2 ** 32 - 100)
  const activity = createProxyActivity(clock)
  activity.forwarded()
  await clock.advance(300)
  t.equal(proxyIdleMs(activity.buffer, clock)(), 300)
})

t.test('another thread reads what the proxy\'s thread writes, without a message', async (t) => {
  const activity = createProxyActivity(systemClock)
  const markedAt = Date.now()
  activity.forwarded()
  const worker = new Worker(new URL(ACTIVITY_READER), { workerData: activity.buffer })
  t.teardown(() => worker.terminate())
  const [idleMs] = await once(worker, 'message') as [number]
  // A worker can take a second or more to start on a busy machine: bounded by the time since the mark.
  const sinceMark = Date.now() - markedAt
  t.ok(idleMs >= 0 && idleMs <= sinceMark, `read as ${idleMs} ms, ${sinceMark} ms after the mark`)
})
