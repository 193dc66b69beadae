/**
 * The shape of an optional capability (the inbox, approvals, payments, MCP, the console): one
 * value per feature folder, with the slots it fills. The root files (cli.ts, server.ts, check.ts,
 * load-config.ts, process/) go through the list in features/index.ts and never name a feature. A
 * slot's code is imported only when it is used, so a feature that is off loads none of its modules
 * and the list itself stays small.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import type { Dispatcher } from 'undici'
import type { ClientAccess } from '../access/client-access.js'
import type { RefuseCaller } from '../callers/caller-refusals.js'
import type { CallerSpec } from '../callers/callers-file.js'
import type { CallersHolder } from '../callers/callers-holder.js'
import type { Clock } from '../clock.js'
import type { Config, EnvironmentName } from '../config/config.js'
import type { EgressView } from '../egress/egress-reporter.js'
import type { ListenSettings } from '../http/listen-check.js'
import type { ViaFields } from '../ops/access-line.js'
import type { ReadinessSection } from '../ops/health-routes.js'
import type { ProxyActivity } from '../ops/proxy-activity.js'
import type { PipelineStep } from '../pipeline/steps.js'
import type { UpstreamResponseTap } from '../routing/upstream-response.js'
import type { RedisAnswer, RedisFinding } from '../state/check-store.js'
import type { StateStore } from '../state/state-store.js'
import type { Storage } from '../storage/storage.js'
import type { TokenSource } from '../tokens/token-source.js'
import type { ResolveSettings } from './feature-settings.js'

export interface CommandIo { out: (text: string) => void, err: (text: string) => void }

export interface CommandContext {
  readonly args: readonly string[]
  readonly io: CommandIo
  readonly clock: Clock
  /**
   * The configuration as the running sidecar reads it, a logger on stderr (stdout is the
   * command's output) and the command's storage (one Redis connection, closed once the command is
   * done). An invalid configuration ends the process with its problems, as at start.
   */
  readonly configured: () => { config: Config, log: Logger, storage: Storage }
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
  /** The same answer as a finding (answers, append-only or not, or the problem); null without PROXY_REDIS_URL. */
  readonly redisFinding: Promise<RedisFinding> | null
  /** What a store is opened with once Redis answered: check's one connection. */
  readonly storage: Storage
  /** The callers file's callers when it was read without a problem, else null. */
  readonly callers: readonly CallerSpec[] | null
}

/** What `check` prints for a feature: lines starting `ok`, `warn`, `skip` or `FAIL`; ok false fails the check. */
export interface CheckSection { ok: boolean, lines: readonly string[] }

/**
 * What a feature hands to the features after it in the list (and to the process): empty here, each
 * providing feature adds its member by declaration merging, as Fastify's decorators are typed
 * (`declare module '../feature/feature.js' { interface SharedParts { … } }`). A reader never
 * imports the provider; a member is absent while its feature is off.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface SharedParts {}

/** What every feature's proxy part is built from: one context instead of a dozen handles. */
export interface ProxyContext {
  readonly config: Config
  readonly log: Logger
  readonly clock: Clock
  readonly registry: Registry
  /** The callers file in force, null without one. */
  readonly callers: CallersHolder | null
  /** The process's storage (its one Redis connection): every store is opened with it. */
  readonly storage: Storage
  /** Filled in list order: a feature reads what the features before it provided. */
  readonly shared: Partial<SharedParts>
}

/** The proxy's parts that exist once the app is built, for a part's routes and workers. */
export interface ProxyParts {
  readonly store: StateStore
  readonly sources: ReadonlyMap<EnvironmentName, TokenSource>
  readonly dispatcher: Dispatcher
  readonly access: ClientAccess
  /** Counts and logs a caller's refusal; null without a callers file. */
  readonly refuse: RefuseCaller | null
}

/** A feature's share of the proxy; every slot optional. */
export interface ProxyPart {
  /** The target a request carries when it is not its URL's (an MCP tool call's inner request). */
  readonly target?: (req: IncomingMessage) => string | undefined
  /** Its pipeline steps, built once the proxy's parts exist. */
  readonly steps?: (parts: ProxyParts) => readonly PipelineStep[]
  /** `via` and `tool` on the access line of a request a feature made. */
  readonly via?: (request: FastifyRequest) => ViaFields | null
  /** Wraps what the forward tells of each upstream answer (the idempotency recorder, when on). */
  readonly tap?: (inner: UpstreamResponseTap | undefined) => UpstreamResponseTap
  readonly readiness?: ReadinessSection
  /** Routes and workers, once the proxy's parts exist; in list order. */
  readonly register?: (app: FastifyInstance, parts: ProxyParts) => Promise<void>
  /** Once the proxy is ready: workers start. */
  readonly start?: () => void
  /** Before the listener closes (workers that read another store stop first). */
  readonly preClose?: () => Promise<void>
  /** After the listener closed: workers and stores close. */
  readonly close?: () => Promise<void>
  /** SIGHUP: re-read what the feature reads from files. */
  readonly reload?: (trigger: string) => void
  /** Watches those files; returns the stop. */
  readonly watch?: () => () => void
}

/** What a part the process runs beside the proxy (a listener of its own) is prepared from. */
export interface SidecarContext {
  readonly config: Config
  readonly log: Logger
  /** Where the sidecar's log lines are written (a thread's lines go there too). */
  readonly lines: { write: (text: string) => unknown }
  /** The main thread's storage, the proxy's too; a part in a thread of its own opens its own there. */
  readonly storage: Storage
  readonly shared: Partial<SharedParts>
}

/** Once the proxy is built: its parts a listener beside it reads. */
export interface BuiltProxy {
  readonly registry: Registry
  readonly sources: ReadonlyMap<EnvironmentName, TokenSource>
  readonly egress: EgressView
}

/** A listener of a feature's own beside the proxy's (the inbox's, the console's). */
export interface SidecarPart {
  /** Its address, checked before anything starts: a taken port stops the start with one line. */
  readonly address: { host: string, port: number, settings: ListenSettings }
  /** Shown in the proxy's `/readyz`, so given before the proxy is built. */
  readonly readiness?: ReadinessSection
  /** The part paces itself on the proxy's forwards: the proxy is told of each. */
  readonly activity?: ProxyActivity
  /** Builds it (a store opened, a thread started), in list order, once the proxy is built. */
  readonly start: (proxy: BuiltProxy) => Promise<void>
  /** After the proxy listens; rejects with the listen error (its code kept). */
  readonly listen: () => Promise<void>
  /** The grace period is over: connections still open are closed. */
  readonly closeAllConnections: () => void
  readonly close: () => Promise<void>
}

export interface Feature {
  /** As the docs name it; also the key of the feature's commands in the usage. */
  readonly name: string
  /** Its part of the configuration; synchronous, as loading the configuration is. */
  readonly settings?: ResolveSettings
  readonly commands?: Readonly<Record<string, FeatureCommand>>
  /** Null when the feature is off: nothing printed. */
  readonly check?: (context: CheckContext) => Promise<CheckSection | null>
  /**
   * With a callers file, before it is read at start: what a reload of the file must be refused for
   * while this feature is off (a caller that would need it on). Loaded only with a callers file.
   */
  readonly callersReloadCheck?: () => Promise<(callers: readonly CallerSpec[]) => string[]>
  /** The feature's share of the proxy; null when it is off. Throws ConfigError when the start cannot have it. */
  readonly proxy?: (context: ProxyContext) => Promise<ProxyPart | null>
  /** Its listener beside the proxy; null when it is off. Prepared before the proxy is built. */
  readonly sidecar?: (context: SidecarContext) => Promise<SidecarPart | null>
  /**
   * What the feature does once every listener beside the proxy is built and before any listens
   * (the payments read the inbox's events). In list order.
   */
  readonly join?: (shared: Partial<SharedParts>) => Promise<void>
}

/** How a command that reads the configuration runs, once its module is loaded. */
export type ConfiguredRun = (
  args: readonly string[],
  config: Config,
  deps: { log: Logger, storage: Storage },
  io: CommandIo & { nowMs: () => number, clock: Clock },
) => Promise<number>

/** A command on the configuration's stores: its module is loaded only when it runs (or its usage is asked for). */
export function configuredCommand (
  summary: string,
  load: () => Promise<ConfiguredRun>,
  usage?: () => Promise<string>,
): FeatureCommand {
  return {
    summary,
    ...(usage === undefined ? {} : { usage }),
    async run ({ args, io, clock, configured }) {
      const { config, log, storage } = configured()
      const run = await load()
      return await run(args, config, { log, storage }, { ...io, clock, nowMs: () => clock.wallMs() })
    },
  }
}
