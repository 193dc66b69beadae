/**
 * A real `redis-server` per test (installed by scripts/ensure-test-tools.sh): a free loopback port, no
 * persistence, a temp dir; killed at teardown. `stop` and `start` again on the same port are the
 * outage and the recovery. While stopped, the port is held by a listener that closes every connection
 * at once: otherwise another test's server, started meanwhile, could take the free port and end the
 * outage early. DEBUG is enabled (loopback only) so a test can stall the server (DEBUG SLEEP).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, Socket, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import type { Test } from 'tap'
import { openRedisConnection, type RedisConnection } from '../../src/storage/redis-connection.js'
import { eventually, HANG_MS } from './eventually.js'
import { freePort } from './ports.js'

export interface RedisServer {
  port: number
  /** `redis://` URL (with the password when one is set). */
  url: string
  stop: () => Promise<void>
  start: () => Promise<void>
}

export async function startRedis (t: Test, options: { password?: string, databases?: number } = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pap-redis-'))
  const port = await freePort()
  let child: ChildProcess | null = null
  let holder: Server | null = null

  const start = async (): Promise<void> => {
    if (holder !== null) {
      const closing = once(holder, 'close')
      holder.close()
      await closing
      holder = null
    }
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--enable-debug-command', 'local']
    if (options.password !== undefined) args.push('--requirepass', options.password)
    if (options.databases !== undefined) args.push('--databases', String(options.databases))
    const proc = spawn('redis-server', args, { stdio: 'ignore' })
    child = proc
    await waitForPort(port, proc)
  }
  const stop = async (): Promise<void> => {
    const proc = child
    child = null
    if (proc === null || proc.exitCode !== null || proc.signalCode !== null) return
    const exited = once(proc, 'exit')
    proc.kill('SIGKILL')
    await exited
    holder = await holdPort(port)
  }
  t.teardown(async () => {
    await stop()
    holder?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  await start()
  const auth = options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`
  return { port, url: `redis://${auth}127.0.0.1:${port}`, stop, start }
}

/** A listener on `port` that drops each connection, or null when someone else took the port first. */
async function holdPort (port: number): Promise<Server | null> {
  const server = createServer((socket) => { socket.destroy() })
  return await new Promise((resolve) => {
    server.once('error', () => { resolve(null) })
    server.listen(port, '127.0.0.1', () => { resolve(server) })
  })
}

async function waitForPort (port: number, proc: ChildProcess): Promise<void> {
  // An exit fails the wait at once: the bound is only for a start that hangs.
  await eventually(async () => {
    if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}`)
    return await new Promise<boolean>((resolve) => {
      const socket = new Socket()
      socket.once('connect', () => { socket.destroy(); resolve(true) })
      socket.once('error', () => { socket.destroy(); resolve(false) })
      socket.connect(port, '127.0.0.1')
    })
  }, { what: `redis-server to accept connections on port ${port}`, everyMs: 25, timeoutMs: HANG_MS })
}

/**
 * A connection of its own to the server, made before a `DEBUG SLEEP` is sent (a connection made
 * during one waits for its end); `untilBlocked` resolves once the server leaves its PING unanswered
 * for 250 ms: the sleep has begun, so what the test sends next meets a blocked server however loaded
 * the machine is.
 */
export async function stallProbe (t: Test, url: string): Promise<{ untilBlocked: () => Promise<void> }> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 })
  probe.on('error', () => {})
  t.teardown(() => { probe.disconnect() })
  await probe.connect()
  const unanswered = (): Promise<boolean> => Promise.race([probe.ping().then(() => false, () => false), new Promise<boolean>((resolve) => { setTimeout(resolve, 250, true) })])
  return {
    async untilBlocked () {
      await eventually(unanswered, { what: 'the server blocked by DEBUG SLEEP', everyMs: 10, timeoutMs: HANG_MS })
    },
  }
}

/** A connection as a process opens it (storage/redis-connection.ts), for a store under test; closed at teardown, after the store. */
export function redisConnection (t: Test, url: string, keyPrefix: string, role = 'test'): RedisConnection {
  const connection = openRedisConnection({ url, keyPrefix, role })
  t.teardown(() => { connection.close() })
  return connection
}
