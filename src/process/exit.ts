/**
 * How the process ends when it cannot go on, and how it reads its configuration: from the
 * environment and a `.env` in the working directory. A problem is a few lines on stderr and exit 1,
 * never a stack trace that buries the reason or Node's quote of the bundle.
 */
import { existsSync } from 'node:fs'
import type { LoadedConfig } from '../config/config.js'
import { ConfigError } from '../config/config-error.js'
import { describeFatal } from '../fatal-error.js'
import { loadConfig } from '../load-config.js'
import { OperatorError } from '../operator-error.js'

export function loadFromEnvironment (): LoadedConfig {
  return loadConfig(process.env, existsSync('.env') ? { dotenvPath: '.env' } : {})
}

export function loadOrExit (): LoadedConfig {
  try {
    return loadFromEnvironment()
  } catch (err) {
    return exitOnConfigError(err)
  }
}

export function exitOnConfigError (err: unknown): never {
  if (err instanceof ConfigError) {
    process.stderr.write(`payments-auth-proxy: invalid configuration (nothing was started)\n${err.problems.map((p) => `  - ${p}\n`).join('')}`)
    process.exit(1)
  }
  throw err
}

/** Any error no code path expected, in every command: a bounded report, never Node's quote of the bundle. */
export function fatal (err: unknown): never {
  if (err instanceof OperatorError) exitWith(err.message)
  process.stderr.write(`payments-auth-proxy: unexpected error (stack positions are in the bundle; node --enable-source-maps maps them to src/)\n${describeFatal(err)}\n`)
  process.exit(1)
}

/** One line and exit 1: for a start that cannot happen, where a stack trace would only bury the reason. */
export function exitWith (line: string): never {
  process.stderr.write(`payments-auth-proxy: ${line}\n`)
  process.exit(1)
}
