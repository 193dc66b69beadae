/**
 * Child processes of the benchmark: each one pinned to a core with `taskset` when the machine has
 * it, tracked in one registry so that everything started is stopped again, on success, on failure
 * and on Ctrl-C. Children get a stdin pipe and exit when it closes (see orphan-guard.mjs), so even a
 * SIGKILLed benchmark leaves nothing running.
 */
import { spawn, execFileSync } from 'node:child_process'
import { closeSync, openSync, readFileSync, unlinkSync, writeFileSync, existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import os from 'node:os'

export const ORPHAN_GUARD = fileURLToPath(new URL('./orphan-guard.mjs', import.meta.url))

const running = new Set()

/** `{ pinning: boolean, cores: number }`: pinning needs taskset and at least 2 usable cores. */
export function cpuLayout () {
  const cores = os.availableParallelism?.() ?? os.cpus().length
  let taskset = false
  try {
    execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' })
    taskset = true
  } catch {}
  return { cores, pinning: taskset && cores >= 2 }
}

/** Pins an already running process (all its threads) to `core`; used for the benchmark itself. */
export function pinProcess (pid, core) {
  if (core === null) return
  execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' })
}

/**
 * Starts `command args` on `core` (null: anywhere). stdout is captured in memory unless `stdout`
 * is a file descriptor; stderr is kept (last 64 KiB) for error messages. With `session`, in a
 * session of its own (setsid): with the kernel's autogroup scheduling it is then weighed as a group
 * of its own, as a container or a systemd service is by its cgroup, not as one more process of the
 * benchmark's (whose load generators would share its group).
 */
export function start (name, command, args, { core = null, env, cwd, stdout, session = false } = {}) {
  const [file, argv] = core === null ? [command, args] : ['taskset', ['-c', String(core), command, ...args]]
  const child = spawn(file, argv, { env, cwd, stdio: ['pipe', stdout ?? 'pipe', 'pipe'], detached: session })
  const proc = { name, child, pid: child.pid, out: '', err: '', exited: null }
  proc.exited = new Promise((resolve) => child.once('exit', (code, signal) => { running.delete(proc); resolve({ code, signal }) }))
  child.once('error', (err) => { proc.err += `\nspawn failed: ${err.message}` })
  child.stdout?.setEncoding('utf8').on('data', (s) => { proc.out = (proc.out + s).slice(-1 << 20) })
  child.stderr.setEncoding('utf8').on('data', (s) => { proc.err = (proc.err + s).slice(-1 << 16) })
  running.add(proc)
  return proc
}

/**
 * A stdout for a proxy under measurement: a container's stdout is a FIFO that containerd reads,
 * so the log goes through one here too, and `cat` appends it to `logFile` on the core of the
 * script that calls this (the load core). (A spawn's 'pipe' would be a socket pair, and a file
 * costs its writer differently.) Pass the returned descriptor as `stdout`, then close it.
 */
export function logFifo (name, logFile) {
  const fifo = `${logFile}.${process.pid}-${running.size}.fifo`
  execFileSync('mkfifo', [fifo])
  start(`${name}'s log`, 'sh', ['-c', 'exec cat "$0" >> "$1"', fifo, logFile], { stdout: 'ignore' })
  const fd = openSync(fifo, 'w')
  unlinkSync(fifo)
  return fd
}

/** Resolves with the first stdout line that parses as JSON and has `key`; rejects on exit or timeout. */
export function waitForJsonLine (proc, key, timeoutMs = 15_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { cleanup(); reject(new Error(`${proc.name}: no "${key}" line within ${timeoutMs} ms\n${proc.err}`)) }, timeoutMs)
    const check = () => {
      for (const line of proc.out.split('\n')) {
        try {
          const value = JSON.parse(line)
          if (value !== null && typeof value === 'object' && key in value) { cleanup(); resolve(value); return }
        } catch {}
      }
    }
    const onExit = () => { cleanup(); reject(new Error(`${proc.name} exited before it was ready\n${proc.err}`)) }
    const cleanup = () => { clearTimeout(timer); proc.child.stdout.off('data', check); proc.child.off('exit', onExit) }
    proc.child.stdout.on('data', check)
    proc.child.once('exit', onExit)
    check()
  })
}

/** Runs a process to completion and returns its stdout; rejects on a non-zero exit or after timeoutMs. */
export async function run (name, command, args, options = {}) {
  const proc = start(name, command, args, options)
  const timer = setTimeout(() => { proc.child.kill('SIGKILL') }, options.timeoutMs ?? 120_000)
  const { code, signal } = await proc.exited
  clearTimeout(timer)
  if (code !== 0) throw new Error(`${name} failed (${signal ?? `exit ${code}`})\n${proc.err.slice(-4000)}`)
  return proc.out
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stop (proc, graceMs = 5_000) {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return proc.exited
  proc.child.kill('SIGTERM')
  const timer = setTimeout(() => { proc.child.kill('SIGKILL') }, graceMs)
  const result = await proc.exited
  clearTimeout(timer)
  return result
}

export async function stopAll () {
  await Promise.all([...running].map((proc) => stop(proc)))
}

/** Last resort on exit: nothing asynchronous can run any more. */
export function killAllNow () {
  for (const proc of running) {
    try { proc.child.kill('SIGKILL') } catch {}
  }
}

/** A port that was free a moment ago (the proxy's port must be known before it starts). */
export function freePort () {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

function statusKb (pid, field) {
  try {
    const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))
    return match === null ? null : Number(match[1])
  } catch {
    return null
  }
}

/**
 * Peak RSS of `pid` over a stretch of time: VmHWM is reset to the current RSS at the start (writing 5
 * to clear_refs, Linux >= 4.0) and read at the end; VmRSS is polled as well in case the reset is
 * not permitted. Returns { stop(): peakKb }.
 */
export function watchPeakRss (pid, intervalMs = 100) {
  let reset = false
  if (existsSync(`/proc/${pid}/clear_refs`)) {
    try { writeFileSync(`/proc/${pid}/clear_refs`, '5'); reset = true } catch {}
  }
  let maxRss = statusKb(pid, 'VmRSS') ?? 0
  const timer = setInterval(() => { maxRss = Math.max(maxRss, statusKb(pid, 'VmRSS') ?? 0) }, intervalMs)
  return {
    stop () {
      clearInterval(timer)
      const hwm = statusKb(pid, 'VmHWM')
      return reset && hwm !== null ? Math.max(hwm, maxRss) : maxRss
    },
  }
}
