/**
 * The process's Redis connection (SPEC §9): one ioredis client per isolate, which every store kept
 * in Redis uses (the state store, approvals, payments, the inbox's and the notifications' outboxes,
 * the console's sign-ins), the way svix's features use "the queue" or "the cache" and never a
 * client of their own. The inbox's thread is an isolate of its own, which cannot share a socket
 * with the main thread: it opens its own connection the same way (webhooks/inbox-server.ts).
 *
 * What every store's client had copied lives here once:
 * - the options. ioredis's defaults queue commands while Redis is down and retry each 20 times, so
 *   a request would hang instead of getting 503: every command fails fast while the connection is
 *   not ready (no offline queue, no retry), and reconnects are at most a second apart, so recovery
 *   is automatic. The connection is named `pap:<role>` (CLIENT SETNAME), for CLIENT LIST.
 * - the command deadline. It is the store's, not the connection's: each store has a view of the
 *   client (`commands`) whose commands fail after its own deadline, on the same socket. A command
 *   that timed out stays in ioredis' queue: its late reply, when Redis answers at all, is matched to
 *   it, not to the next command, so stores with different deadlines can share the connection.
 * - the password kept out of logs: ioredis messages can carry the address or URL, so what a store
 *   is told of an error (`watch`) is its code, or, when Redis itself refused the connection's set-up
 *   (a wrong password), which refusal it was; never the message.
 * - the events (error, close, ready), told to each store that watches, a store that starts
 *   watching late told the connection's last one at once; and the two ways a store reports an
 *   outage: one line per error (`reportErrors`), or one line per outage and one when it is over
 *   (`trackOutages`, the state store's).
 * - the scripts: each store's Lua scripts are defined once on the client, by name.
 */
import { Redis, type Command, type RedisOptions } from 'ioredis'
import type { Logger } from 'pino'
import { redisRefusal, type RedisRefusal } from './redis-refusal.js'
import { waitFor } from './wait-for.js'

/** Each connection attempt is given up after this (SPEC §9: 503 within 2 s, never hanging). */
export const REDIS_CONNECT_TIMEOUT_MS = 1000
/** Reconnect backoff cap: a store is back within about a second of Redis. */
export const REDIS_RECONNECT_MAX_MS = 1000

/**
 * The client options every connection of the proxy's is made with; `overrides` for `check`'s
 * one-off probe (state/ask-redis.ts), whose bounds are its own.
 */
export function redisClientOptions (role: string, overrides: Partial<RedisOptions> = {}): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, REDIS_RECONNECT_MAX_MS),
    lazyConnect: true,
    // Sent after AUTH, its refusal ignored (a user without CLIENT rights still connects).
    connectionName: `pap:${role}`,
    ...overrides,
  }
}

/**
 * When a store's command that Redis has not answered fails:
 * - `timer`: when its deadline's timer fires (ioredis's own `commandTimeout`);
 * - `after-replies`: once the replies that already reached the socket are read, one turn of the loop
 *   later. A timer fires before the loop reads its sockets: a loop held past the deadline (a burst
 *   being parsed, a CPU shared under a load of 20) would fail commands whose replies were waiting,
 *   and an event Redis had stored would be answered 503 (the inbox's and the outboxes' store). The
 *   SQLite thread's deadline had the same race (sqlite/sqlite-thread.ts).
 */
export interface Deadline { ms: number, judged: 'timer' | 'after-replies' }

/** A store's Lua script: its keys are passed first, `keys` of them (0: the script builds its keys from ARGV). */
export interface ScriptDefinition { lua: string, keys: number }

/** What a store is told of an error: never the message, which may quote the URL or what was sent. */
export interface ConnectionError {
  /** The error's code (ECONNREFUSED), else its name (ReplyError). */
  reason: string
  /** When Redis refused the connection's set-up: which refusal. */
  refusal: RedisRefusal | null
}

export interface ConnectionWatcher {
  error?: (error: ConnectionError) => void
  close?: () => void
  ready?: () => void
}

export interface RedisConnection {
  /** Every key of the proxy's starts with it (PROXY_REDIS_KEY_PREFIX); a store adds its own part. */
  readonly keyPrefix: string
  /** ioredis' status: commands are sent only while it is `ready`. */
  readonly status: () => string
  /**
   * A store's commands on the shared connection, each failing after the store's deadline; its scripts defined by name.
   */
  readonly commands: (deadline: Deadline, scripts?: Readonly<Record<string, ScriptDefinition>>) => Redis
  /** Resolves once the connection is ready, or false after `timeoutMs` (the store starts anyway). */
  readonly untilReady: (timeoutMs: number) => Promise<boolean>
  /** The connection's events from now on, the last one before at once; returns the stop. */
  readonly watch: (watcher: ConnectionWatcher) => () => void
  /** Once every store is closed: the process's, at its end. */
  readonly close: () => void
}

export interface RedisConnectionOptions {
  /** Holds a password when Redis has one: never logged. */
  url: string
  keyPrefix: string
  /** Names the connection `pap:<role>`. */
  role: string
}

type LastEvent = { kind: 'error', error: ConnectionError } | { kind: 'close' } | { kind: 'ready' }

export function openRedisConnection (options: RedisConnectionOptions): RedisConnection {
  const client = new Redis(options.url, redisClientOptions(options.role))
  const watchers = new Set<ConnectionWatcher>()
  let last: LastEvent | null = null
  // A refused SELECT is followed by 'ready' (in database 0) and holds for the connection's life: a
  // store that starts watching later is told it before the 'ready'.
  let lasting: LastEvent | null = null
  const tell = (event: LastEvent): void => {
    last = event
    if (event.kind === 'error' && event.error.refusal?.lasting === true) lasting = event
    for (const watcher of [...watchers]) told(watcher, event)
  }
  client.on('error', (err: NodeJS.ErrnoException) => { tell({ kind: 'error', error: { reason: err.code ?? err.name, refusal: redisRefusal(err) } }) })
  client.on('close', () => { tell({ kind: 'close' }) })
  client.on('ready', () => { tell({ kind: 'ready' }) })
  // A failed first connection is reported by the 'error' listener and retried by retryStrategy.
  client.connect().catch(() => {})

  const defined = new Map<string, string>()
  const define = (scripts: Readonly<Record<string, ScriptDefinition>>): void => {
    for (const [name, { lua, keys }] of Object.entries(scripts)) {
      const before = defined.get(name)
      if (before === lua) continue
      if (before !== undefined) throw new Error(`two Redis scripts named ${name}`)
      defined.set(name, lua)
      client.defineCommand(name, { numberOfKeys: keys, lua })
    }
  }

  return {
    keyPrefix: options.keyPrefix,
    status: () => client.status,
    commands (deadline, scripts) {
      if (scripts !== undefined) define(scripts)
      return withDeadline(client, deadline)
    },
    untilReady: async (timeoutMs) => await waitFor(() => client.status === 'ready', timeoutMs),
    watch (watcher) {
      watchers.add(watcher)
      const [before, at] = [lasting, last]
      if (before !== null && before !== at) told(watcher, before)
      if (at !== null) told(watcher, at)
      return () => { watchers.delete(watcher) }
    },
    close () {
      watchers.clear()
      client.disconnect()
    },
  }
}

function told (watcher: ConnectionWatcher, event: LastEvent): void {
  if (event.kind === 'error') watcher.error?.(event.error)
  else if (event.kind === 'close') watcher.close?.()
  else watcher.ready?.()
}

/**
 * The client as one store sees it: every property the client's, and every command it sends (its
 * scripts', a pipeline's and a MULTI's too, which send through it) given the store's deadline before
 * the shared client sends it. Its state stays the client's: nothing is ever set on the view.
 */
function withDeadline (client: Redis, deadline: Deadline): Redis {
  const view = Object.create(client) as Redis
  const time = deadline.judged === 'timer' ? (command: Command): void => { command.setTimeout(deadline.ms) } : afterReplies(deadline.ms)
  Object.defineProperty(view, 'sendCommand', {
    value: (...args: Parameters<Redis['sendCommand']>): unknown => {
      time(args[0])
      return client.sendCommand(...args)
    },
  })
  return view
}

function afterReplies (deadlineMs: number): (command: Command) => void {
  // A command can pass through sendCommand again (a resend after a reconnect): its deadline is
  // counted from its first sending, as ioredis counts its own.
  const timed = new WeakSet<Command>()
  return (command) => {
    if (timed.has(command)) return
    timed.add(command)
    const timer = setTimeout(() => {
      // Between this turn's timers and its immediates, the loop reads its sockets.
      setImmediate(() => { if (!command.isSettled) command.reject(new Error('Command timed out')) })
    }, deadlineMs)
    // Cleared once answered: a pending timer would hold the command, and an event's body, for the
    // whole deadline.
    const clear = (): void => { clearTimeout(timer) }
    command.promise.then(clear, clear)
  }
}

/** One line per error, as the stores other than the state store log them: `<store> (Redis) unavailable`. */
export function reportErrors (connection: RedisConnection, log: Logger, unavailable: string): () => void {
  return connection.watch({ error: ({ reason }) => { log.warn({ reason }, unavailable) } })
}

export interface OutageReport {
  log: Logger
  /** Logged (error) once an outage starts, with its reason. */
  unavailable: string
  /** Logged (info) once it is over. */
  recovered: string
  /** Told of every change, and of every failure while it lasts (a metric of the store's being up). */
  up: (up: boolean) => void
  /** Asked every REDIS_RECONNECT_MAX_MS while the connection is ready but the store saw it fail (a stall). */
  probe: () => Promise<unknown>
}

export interface Outages {
  /** A command failed (a timeout, the connection closed): the outage starts, once. */
  readonly down: (reason: string) => void
  /** A command was answered: the outage is over. */
  readonly up: () => void
  readonly isDown: () => boolean
  /** What Redis refused, while it holds. */
  readonly refusal: () => RedisRefusal | null
  readonly stop: () => void
}

/**
 * One error line per outage, not per request or per reconnect attempt, and one when it is over. A
 * hung server keeps its connection (ioredis stays 'ready') while every command times out: the
 * outage ends with the first answer, so one is asked for every second rather than waiting for a
 * request, and the store is not reported up until the server answers again. A refused SELECT holds
 * until the URL is changed: no answer ends it.
 */
export function trackOutages (connection: RedisConnection, report: OutageReport): Outages {
  const { log } = report
  let down = false
  let stopped = false
  let refusal: RedisRefusal | null = null
  let probe: NodeJS.Timeout | null = null
  const stopProbe = (): void => {
    if (probe !== null) clearInterval(probe)
    probe = null
  }
  const probeWhileDown = (): void => {
    if (probe !== null) return
    let asking = false
    probe = setInterval(() => {
      if (!down || stopped) { stopProbe(); return }
      if (asking || connection.status() !== 'ready') return
      asking = true
      report.probe().then(markUp, () => {}).finally(() => { asking = false })
    }, REDIS_RECONNECT_MAX_MS).unref()
  }
  const markDown = (reason: string): void => {
    report.up(false)
    if (down || stopped) return
    down = true
    log.error({ reason }, report.unavailable)
    probeWhileDown()
  }
  const markUp = (): void => {
    if (refusal?.lasting === true) return
    refusal = null
    report.up(true)
    if (down) log.info(report.recovered)
    down = false
    stopProbe()
  }
  report.up(false)
  const unwatch = connection.watch({
    error (error) {
      refusal = error.refusal ?? refusal
      markDown(refusal?.sentence ?? error.reason)
    },
    close () { markDown('connection closed') },
    ready: markUp,
  })
  return {
    down: markDown,
    up: markUp,
    isDown: () => down,
    refusal: () => refusal,
    stop () {
      stopped = true
      stopProbe()
      unwatch()
    },
  }
}
