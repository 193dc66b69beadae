/** A worker for proxy-activity.test.ts: reads the proxy's idle time from the buffer it is given, once, and says it. */
import { parentPort, workerData } from 'node:worker_threads'
import { systemClock } from '../../src/clock.js'
import { proxyIdleMs } from '../../src/ops/proxy-activity.js'

export const ACTIVITY_READER = import.meta.url

if (parentPort !== null && workerData instanceof SharedArrayBuffer) parentPort.postMessage(proxyIdleMs(workerData, systemClock)())
