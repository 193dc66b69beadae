/**
 * A worker for restarting-worker.test.ts: numbers its starts in a counter shared by all of them,
 * fails the starts whose numbers are in `failing` (it says so, and ends), else says it serves and
 * exits with code 3 when told 'exit' (a crash).
 */
import { parentPort, workerData } from 'node:worker_threads'

export const FIXTURE_WORKER = import.meta.url

export interface FixtureData { starts: SharedArrayBuffer, failing: readonly number[] }

const data = workerData as FixtureData | null
if (parentPort !== null && data !== null) {
  const start = Atomics.add(new Int32Array(data.starts), 0, 1) + 1
  if (data.failing.includes(start)) {
    parentPort.postMessage('failed')
  } else {
    parentPort.postMessage('serving')
    parentPort.on('message', (message) => { if (message === 'exit') process.exit(3) })
  }
}
