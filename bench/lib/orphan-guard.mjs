/**
 * Preloaded (`node --import`) into every process the benchmark starts: when the benchmark's end of
 * the stdin pipe closes (it exited, was killed, or Ctrl-C'd), this process stops too, first with
 * SIGTERM so a server can drain, then for good. stdin is unref'ed so it never keeps a process alive
 * by itself and costs nothing while the benchmark runs.
 */
import { isMainThread } from 'node:worker_threads'

// A worker thread of the process (the sidecar's inbox and SQLite threads load this too) has no stdin of its own.
if (isMainThread) {
  const stdin = process.stdin
  stdin.on('error', () => {})
  stdin.once('close', () => {
    setTimeout(() => { process.exit(1) }, 10_000).unref()
    process.kill(process.pid, 'SIGTERM')
  })
  stdin.on('data', () => {})
  stdin.unref?.()
}
