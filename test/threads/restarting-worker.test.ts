/**
 * A worker thread started again when it stops unexpectedly (src/threads/restarting-worker.ts), with
 * a fixture worker that can be told to crash and to fail chosen starts: started again, logged, told
 * again what it was told after its first start; a failing start retried with growing pauses; none
 * after stop(); a first start that fails is the caller's to handle.
 */
import t from 'tap'
import { Worker } from 'node:worker_threads'
import { FIRST_RESTART_MS, startRestartingWorker, type RestartingWorker } from '../../src/threads/restarting-worker.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { captureLogger } from '../helpers/harness.js'
import { FIXTURE_WORKER, type FixtureData } from './fixture-worker.js'

function starter (failing: readonly number[] = []): { start: () => Promise<Worker>, starts: () => number } {
  const data: FixtureData = { starts: new SharedArrayBuffer(4), failing }
  const start = (): Promise<Worker> => new Promise((resolve, reject) => {
    const worker = new Worker(new URL(FIXTURE_WORKER), { workerData: data })
    worker.once('message', (message) => {
      if (message === 'serving') resolve(worker)
      else reject(new Error('the fixture could not start'))
    })
  })
  return { start, starts: () => Atomics.load(new Int32Array(data.starts), 0) }
}

/** Counts the calls of `start` as the restarting worker makes them (the fixture counts the starts its threads make, later). */
function counted (start: () => Promise<Worker>): { start: () => Promise<Worker>, calls: () => number } {
  let calls = 0
  return { start: () => { calls++; return start() }, calls: () => calls }
}

/**
 * Resolves once a restart that the worker scheduled by now would have been asked for: the first
 * waits FIRST_RESTART_MS, and Node runs timers of one length in the order they were set, so this
 * one, set after, runs after it.
 */
async function afterFirstPause (): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, FIRST_RESTART_MS))
}

async function crash (worker: RestartingWorker | null): Promise<void> {
  const current = worker?.current()
  if (current === null || current === undefined) throw new Error('no worker serving')
  const exited = new Promise((resolve) => current.once('exit', resolve))
  current.postMessage('exit')
  await exited
}

t.test('a worker that stops unexpectedly is started again, logged, and told again what it was told', async (t) => {
  const { logger, logs } = captureLogger()
  const { start, starts } = starter()
  const restarted: Worker[] = []
  let stops = 0
  const worker = await startRestartingWorker({ name: 'fixture', log: logger, start, onStopped: () => { stops++ }, onRestarted: async (w) => { restarted.push(w) } })
  t.teardown(async () => { worker.stop(); await worker.current()?.terminate() })
  const first = worker.current()
  await crash(worker)
  t.equal(stops, 1, 'its user is told it stopped')
  t.equal(worker.current(), null, 'none serves until it is started again')
  await eventually(() => worker.current() !== null, { what: 'started again', timeoutMs: HANG_MS })
  t.not(worker.current(), first)
  t.same(restarted, [worker.current()], 'the new worker is told again')
  t.equal(starts(), 2)
  t.match(logs.find('thread stopped: starting it again'), [{ level: 50, thread: 'fixture', exitCode: 3, restartInMs: 100 }])
  t.match(logs.find('thread started again'), [{ level: 30, thread: 'fixture' }])
})

t.test('a start that fails again is retried after twice the pause each time, then the pause is short again', async (t) => {
  const { logger, logs } = captureLogger()
  const { start, starts } = starter([2, 3])
  const worker = await startRestartingWorker({ name: 'fixture', log: logger, start })
  t.teardown(async () => { worker.stop(); await worker.current()?.terminate() })
  await crash(worker)
  await eventually(() => worker.current() !== null, { what: 'started again after two failed starts', timeoutMs: HANG_MS })
  t.equal(starts(), 4)
  t.match(logs.find('thread could not be started again'), [{ level: 50, restartInMs: 200 }, { level: 50, restartInMs: 400 }], 'each failed start logged, the next pause doubled')
  await crash(worker)
  t.match(logs.find('thread stopped: starting it again').at(-1), { restartInMs: 100 }, 'a start that works makes the next pause short again')
})

t.test('after stop, a worker that ends is not started again', async (t) => {
  const { logger, logs } = captureLogger()
  const { start, starts } = starter()
  const asked = counted(start)
  const worker = await startRestartingWorker({ name: 'fixture', log: logger, start: asked.start })
  worker.stop()
  // Its exit is handled by the worker before crash() hears of it.
  await crash(worker)
  await afterFirstPause()
  t.equal(asked.calls(), 1, 'no start asked for after the stop')
  t.equal(starts(), 1)
  t.same(logs.find('thread stopped: starting it again'), [])
})

t.test('a first start that fails rejects: nothing is retried', async (t) => {
  const { logger } = captureLogger()
  const { start, starts } = starter([1])
  const asked = counted(start)
  await t.rejects(startRestartingWorker({ name: 'fixture', log: logger, start: asked.start }), /could not start/)
  await afterFirstPause()
  t.equal(asked.calls(), 1, 'no start asked for after the first failed')
  t.equal(starts(), 1)
})
