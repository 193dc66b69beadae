/**
 * The shape of an optional capability (the inbox, approvals, payments, MCP, the console): one
 * value per feature folder, with the slots it fills. The root files (cli.ts, check.ts) go through
 * the list in features/index.ts and never name a feature. A slot's code is imported only when it
 * is used, so a feature that is off loads none of its modules and the list itself stays small.
 */
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Config } from '../config/config.js'
import type { CallerSpec } from '../callers/callers-file.js'
import type { RedisAnswer } from '../state/check-store.js'

export interface CommandIo { out: (text: string) => void, err: (text: string) => void }

export interface CommandContext {
  readonly args: readonly string[]
  readonly io: CommandIo
  readonly clock: Clock
  /**
   * The configuration as the running sidecar reads it, and a logger on stderr (stdout is the
   * command's output). An invalid configuration ends the process with its problems, as at start.
   */
  readonly configured: () => { config: Config, log: Logger }
}

/** An operator command: what the usage lists, and what `<command> --help` prints without reading the configuration. */
export interface FeatureCommand {
  readonly summary: string
  readonly usage?: () => Promise<string>
  /** Resolves with the exit code. */
  readonly run: (context: CommandContext) => Promise<number>
}

export interface CheckContext {
  readonly config: Config
  readonly log: Logger
  /** Redis asked once for every store kept there (undefined without PROXY_REDIS_URL). */
  readonly redis: Promise<RedisAnswer> | undefined
  /** The callers file's callers when it was read without a problem, else null. */
  readonly callers: readonly CallerSpec[] | null
}

/** What `check` prints for a feature: lines starting `ok`, `warn`, `skip` or `FAIL`; ok false fails the check. */
export interface CheckSection { ok: boolean, lines: readonly string[] }

export interface Feature {
  /** As the docs name it; also the key of the feature's commands in the usage. */
  readonly name: string
  readonly commands?: Readonly<Record<string, FeatureCommand>>
  /** Null when the feature is off: nothing printed. */
  readonly check?: (context: CheckContext) => Promise<CheckSection | null>
}
