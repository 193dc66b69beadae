/**
 * The commands: what the main usage lists, and what `<command> --help` (or `-h`) prints, its own
 * usage when it has one, without reading the configuration. The proxy's own are here; every
 * feature's come from the features list.
 */
import pino from 'pino'
import type { Logger } from 'pino'
import { systemClock } from '../clock.js'
import type { Config } from '../config/config.js'
import type { CommandContext, FeatureCommand } from '../feature/feature.js'
import { FEATURES } from '../features/index.js'
import { createLogger } from '../logger.js'
import { createStorage, type Storage } from '../storage/storage.js'
import { loadOrExit } from './exit.js'
import { serve } from './serve.js'

interface Command {
  summary: string
  /** The command's own usage text, loaded only when asked for. */
  usage?: (() => Promise<string>) | undefined
  run: () => Promise<void>
}

async function check (): Promise<void> {
  const { config, warnings } = loadOrExit()
  // stdout is the report; log lines (warn and up, or all at LOG_LEVEL=debug/trace) go to stderr.
  const log = commandLogger(config)
  for (const warning of warnings) process.stdout.write(`warn  ${warning}\n`)
  const { runCheck } = await import('../check.js')
  const ok = await runCheck(config, (line) => process.stdout.write(`${line}\n`), log)
  process.stdout.write(ok ? 'all checks passed\n' : 'some checks failed\n')
  process.exitCode = ok ? 0 : 1
}

/** Log lines (a Redis store's warnings) go to stderr: stdout is a command's output. */
function commandLogger (config: Config): Logger {
  return createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, pino.destination({ dest: 2, sync: true }))
}

/**
 * A feature's command, with the arguments after its name; its storage (one Redis connection, `pap:<command>`) closed
 * once it is done.
 */
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

const COMMANDS: Readonly<Record<string, Command>> = {
  serve: { summary: 'run the proxy (default)', run: serve },
  check: { summary: 'validate configuration and the listen address, fetch a token per environment and the egress IP; exit 0 when all is well', run: check },
  'caller-key': {
    summary: 'print a new caller key and its keySha256 line for PROXY_CALLERS_FILE',
    run: async () => { process.stdout.write((await import('../callers/caller-key-command.js')).callerKeyReport()) },
  },
  ...Object.fromEntries(
    FEATURES.flatMap(
      (feature) => Object.entries(feature.commands ?? {}).map(([name, command]) => [
        name,
        featureCommand(name, command),
      ]),
    ),
  ),
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

export async function runCommand (name: string, args: readonly string[]): Promise<void> {
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
