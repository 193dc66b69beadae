#!/usr/bin/env node
/**
 * The process: reads configuration from the environment (and `.env`), runs the proxy or
 * `check`, and owns signals: SIGTERM/SIGINT drain and exit, SIGHUP re-reads credentials.
 * The only module that touches `process`.
 */
import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { existsSync } from 'node:fs'
import type { Logger } from 'pino'
import { systemClock } from './clock.js'
import type { Config, LoadedConfig } from './config/config.js'
import type { CommandContext, FeatureCommand, SharedParts } from './feature/feature.js'
import { FEATURES } from './features/index.js'
import { ConfigError } from './config/config-error.js'
import { loadConfig } from './load-config.js'
import { describeFatal } from './fatal-error.js'
import { describeListenError, listenProblem } from './http/listen-check.js'
import { OperatorError } from './operator-error.js'
import { boundedDestination } from './log-destination.js'
import { createLogger } from './logger.js'
import { watchSecretFiles } from './ops/credential-rotation.js'
import { announceWhenReady } from './ops/ready-announcer.js'
import { changesNeedingRestart } from './ops/restart-required.js'
import { startSummary } from './ops/start-summary.js'
import { createStorage, type Storage } from './storage/storage.js'
import { unsupportedNode } from './supported-node.js'

function load (): LoadedConfig {
  return loadConfig(process.env, existsSync('.env') ? { dotenvPath: '.env' } : {})
}

function loadOrExit (): LoadedConfig {
  try {
    return load()
  } catch (err) {
    return exitOnConfigError(err)
  }
}

function exitOnConfigError (err: unknown): never {
  if (err instanceof ConfigError) {
    process.stderr.write(`payments-auth-proxy: invalid configuration (nothing was started)\n${err.problems.map((p) => `  - ${p}\n`).join('')}`)
    process.exit(1)
  }
  throw err
}

/** Any error no code path expected, in every command: a bounded report, never Node's quote of the bundle. */
function fatal (err: unknown): never {
  if (err instanceof OperatorError) exitWith(err.message)
  process.stderr.write(`payments-auth-proxy: unexpected error (stack positions are in the bundle; node --enable-source-maps maps them to src/)\n${describeFatal(err)}\n`)
  process.exit(1)
}
process.on('uncaughtException', fatal)
process.on('unhandledRejection', fatal)

/** One line and exit 1: for a start that cannot happen, where a stack trace would only bury the reason. */
function exitWith (line: string): never {
  process.stderr.write(`payments-auth-proxy: ${line}\n`)
  process.exit(1)
}

const DROP_NOTICE_INTERVAL_MS = 60_000
let lastDropNoticeMs = -Infinity

/** On stderr, which a log pipeline that stopped reading stdout may still show; once a minute. */
function noticeDroppedLines (bytes: number): void {
  const now = Date.now()
  if (now - lastDropNoticeMs < DROP_NOTICE_INTERVAL_MS) return
  lastDropNoticeMs = now
  process.stderr.write(`payments-auth-proxy: stdout is not being read; dropping log lines (${bytes} bytes just now)\n`)
}

async function serve (): Promise<void> {
  const started = loadOrExit()
  const { config, warnings } = started
  const destination = boundedDestination(noticeDroppedLines)
  const log = createLogger(config.logLevel, destination)
  for (const warning of warnings) log.warn({ warning }, 'configuration warning')
  const { host, port } = config.listen
  // Loading the server's modules starts nothing, so it runs meanwhile. Each command imports its own
  // code: `check` never loads the server, serving never loads check.
  const server = import('./server.js')
  server.catch(() => {})
  // The main thread's one Redis connection (storage/storage.ts), for the proxy's stores and the listeners' beside it.
  const storage = createStorage(config.state, 'sidecar')
  // The features' listeners beside the proxy (features/index.ts), each loaded only when on.
  const shared: Partial<SharedParts> = {}
  const besides = (await Promise.all(FEATURES.map(async (feature) => await feature.sidecar?.({ config, log, lines: destination, storage, shared })))).filter((part) => part !== undefined && part !== null)
  // Before anything starts: a taken port must not surface as a half-started proxy's side effects.
  const taken = await Promise.all([
    listenProblem(host, port),
    ...besides.map(async ({ address }) => await listenProblem(address.host, address.port, address.settings)),
  ])
  for (const problem of taken) if (problem !== null) exitWith(problem)
  const { buildServer } = await server
  const readiness = besides.flatMap((part) => part.readiness === undefined ? [] : [part.readiness])
  const activity = besides.find((part) => part.activity !== undefined)?.activity
  const proxy = await buildServer(config, { logger: log, readiness, activity, storage }).catch(exitOnConfigError)
  const { app, sources, rotation, callers, restart, metrics } = proxy
  Object.assign(shared, proxy.shared)
  for (const part of besides) await part.start({ registry: metrics.registry, sources, egress: proxy.egress })
  for (const feature of FEATURES) await feature.join?.(shared)
  const features = startSummary(config, callers?.current() ?? null, shared.approvals !== undefined)
  log.info(features.fields, features.msg)
  let current: Config = config

  // One reload at a time, each on the configuration the previous one left in force. The
  // configuration is read once per reload: credentials rotate live, and every other variable that
  // differs from the start's is reported as needing a restart (ops/restart-required.ts).
  let rotating: Promise<void> = Promise.resolve()
  const reload = (trigger: string): void => {
    rotating = rotating.then(async () => {
      log.info({ trigger }, 'reloading credentials')
      let next: LoadedConfig | ConfigError
      try {
        next = load()
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err
        next = err
      }
      if (!(next instanceof ConfigError)) restart.update(changesNeedingRestart(started, next))
      current = await rotation.rotate(current, () => {
        if (next instanceof ConfigError) throw next
        return next
      })
    }).catch((err: unknown) => { log.error({ err }, 'credential reload failed') })
  }
  process.on('SIGHUP', () => { reload('SIGHUP') })
  process.on('SIGHUP', () => { callers?.reload('SIGHUP') })
  process.on('SIGHUP', () => { proxy.reloadFeatures('SIGHUP') })
  const stopWatchingCallers = callers?.watch()
  const stopWatchingFeatures = proxy.watchFeatures()
  let stopAnnouncing = (): void => {}
  const stopWatching = watchSecretFiles(config.secretFiles, () => { reload('secret file changed') })

  const graceMs = config.shutdownGraceS * 1000
  const closeAll = async (): Promise<void> => {
    await Promise.all([app.close(), ...besides.map(async (part) => { await part.close() })])
    await storage.close()
  }
  // From here close-with-grace logs an uncaught error and drains before exiting.
  process.off('uncaughtException', fatal)
  process.off('unhandledRejection', fatal)
  closeWithGrace({ delay: graceMs + 2_000, skip: ['SIGHUP'], logger: { error: (m: unknown) => log.error({ detail: String(m) }, 'shutdown') } }, async ({ signal, err }) => {
    if (err !== undefined) log.error({ err }, 'fatal error; shutting down')
    log.info({ signal, graceSeconds: config.shutdownGraceS }, 'shutting down: draining in-flight requests')
    stopWatching()
    stopWatchingCallers?.()
    stopWatchingFeatures()
    stopAnnouncing()
    // In-flight requests get the grace period; whatever is still open after it is cut.
    const cut = setTimeout(() => {
      app.server.closeAllConnections()
      for (const part of besides) part.closeAllConnections()
    }, graceMs)
    await closeAll()
    clearTimeout(cut)
    log.info('stopped')
  })

  await app.listen({ host, port }).catch(async (err: unknown) => {
    const sentence = describeListenError(err, host, port)
    if (sentence === null) throw err
    await app.close()
    exitWith(sentence)
  })
  const fields = { environments: [...sources.keys()], defaultEnvironment: config.defaultEnvironment }
  log.info(fields, 'payments-auth-proxy listening; ready once every environment holds a token')
  stopAnnouncing = announceWhenReady(sources, log, fields)
  for (const part of besides) {
    await part.listen().catch(async (err: unknown) => {
      const { host: partHost, port: partPort, settings } = part.address
      const sentence = describeListenError(err, partHost, partPort, settings)
      if (sentence === null) throw err
      await closeAll()
      exitWith(sentence)
    })
  }
}

async function check (): Promise<void> {
  const { config, warnings } = loadOrExit()
  // stdout is the report; log lines (warn and up, or all at LOG_LEVEL=debug/trace) go to stderr.
  const log = commandLogger(config)
  for (const warning of warnings) process.stdout.write(`warn  ${warning}\n`)
  const { runCheck } = await import('./check.js')
  const ok = await runCheck(config, (line) => process.stdout.write(`${line}\n`), log)
  process.stdout.write(ok ? 'all checks passed\n' : 'some checks failed\n')
  process.exitCode = ok ? 0 : 1
}

/** Log lines (a Redis store's warnings) go to stderr: stdout is a command's output. */
function commandLogger (config: Config): Logger {
  return createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, pino.destination({ dest: 2, sync: true }))
}

/** A feature's command (features/index.ts), with the arguments after its name; its storage (one Redis connection, `pap:<command>`) closed once it is done. */
function featureCommand (name: string, command: FeatureCommand): Command {
  return {
    summary: command.summary,
    usage: command.usage,
    run: async () => {
      let storage: Storage | null = null
      const context: CommandContext = {
        args: process.argv.slice(3),
        io: { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) },
        clock: systemClock,
        configured: () => {
          const { config } = loadOrExit()
          storage ??= createStorage(config.state, name)
          return { config, log: commandLogger(config), storage }
        },
      }
      try {
        process.exitCode = await command.run(context)
      } finally {
        await (storage as Storage | null)?.close()
      }
    },
  }
}

/**
 * The commands: what the main usage lists, and what `<command> --help` (or `-h`) prints, its own
 * usage when it has one, without reading the configuration. A new command is one entry here.
 */
interface Command {
  summary: string
  /** The command's own usage text, loaded only when asked for. */
  usage?: (() => Promise<string>) | undefined
  run: () => Promise<void>
}

const COMMANDS: Readonly<Record<string, Command>> = {
  serve: { summary: 'run the proxy (default)', run: serve },
  check: { summary: 'validate configuration and the listen address, fetch a token per environment and the egress IP; exit 0 when all is well', run: check },
  'caller-key': {
    summary: 'print a new caller key and its keySha256 line for PROXY_CALLERS_FILE',
    run: async () => { process.stdout.write((await import('./callers/caller-key-command.js')).callerKeyReport()) },
  },
  ...Object.fromEntries(FEATURES.flatMap((feature) => Object.entries(feature.commands ?? {}).map(([name, command]) => [name, featureCommand(name, command)]))),
}

const CONFIGURATION_LINE = 'Configuration comes from environment variables and a .env file in the working directory; see config.example.env.'
const NAME_WIDTH = Math.max(...Object.keys(COMMANDS).map((name) => name.length))
const USAGE = [
  `usage: payments-auth-proxy [${[...Object.keys(COMMANDS), '--help'].join(' | ')}]`,
  ...Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(NAME_WIDTH)}  ${command.summary}`),
  CONFIGURATION_LINE,
].join('\n')

const HELP = new Set(['--help', '-h'])

/** `--help` or `-h` anywhere among a command's arguments (before a `--`). */
function asksForHelp (args: readonly string[]): boolean {
  const end = args.indexOf('--')
  return (end === -1 ? args : args.slice(0, end)).some((arg) => HELP.has(arg))
}

async function run (name: string, args: readonly string[]): Promise<void> {
  if (HELP.has(name) || name === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (command === undefined) {
    process.stderr.write(`unknown command: ${name}\n${USAGE}\n`)
    process.exitCode = 2
    return
  }
  if (asksForHelp(args)) {
    const usage = command.usage === undefined ? `usage: payments-auth-proxy ${name}\n  ${command.summary}` : await command.usage()
    process.stdout.write(`${usage}\n${CONFIGURATION_LINE}\n`)
    return
  }
  await command.run()
}

// Refused in words before any command: the SQLite driver would crash an older Node mid-run.
const unsupported = unsupportedNode(process.versions.node)
if (unsupported !== null) exitWith(unsupported)
await run(process.argv[2] ?? 'serve', process.argv.slice(3)).catch(fatal)
