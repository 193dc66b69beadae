/** What buildServer (server.ts) is given and what it returns: the proxy, and the handles the process and tests hold. */
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { CallersHolder } from '../callers/callers-holder.js'
import type { Clock } from '../clock.js'
import type { EnvironmentName } from '../config/config.js'
import type { EgressReporter } from '../egress/egress-reporter.js'
import type { SharedParts } from '../feature/feature.js'
import type { HttpEdgeSettings } from '../http/node-server.js'
import type { CredentialRotation } from '../ops/credential-rotation.js'
import type { ReadinessSection } from '../ops/health-routes.js'
import type { ProxyMetrics } from '../ops/metrics.js'
import type { ProxyActivity } from '../ops/proxy-activity.js'
import type { RestartNotice } from '../ops/restart-required.js'
import type { Outbound } from '../outbound/outbound-agents.js'
import type { StateStore } from '../state/state-store.js'
import type { Storage } from '../storage/storage.js'
import type { FetchToken } from '../tokens/token-client.js'
import type { TokenSource } from '../tokens/token-source.js'

export interface ServerDeps {
  logger: Logger
  clock?: Clock
  outbound?: Outbound
  fetchToken?: FetchToken
  random?: () => number
  /** The shared state store (SPEC §9); built from config.state when absent. */
  store?: StateStore
  /** The process's storage (its one Redis connection), shared with the listeners beside the proxy; one of its own,
   * closed with it, when absent. */
  storage?: Storage
  /** Slow-client timeouts and lingering-close bounds; tests shorten them. */
  httpEdges?: HttpEdgeSettings
  /** `/readyz` sections of parts the process runs beside the proxy (the inbox's, SPEC §10), before the features'. */
  readiness?: readonly ReadinessSection[]
  /** Told of every forwarded request: the inbox paces its intake while the proxy is busy (ops/proxy-activity.ts). */
  activity?: ProxyActivity | undefined
}

export interface ProxyServer {
  app: FastifyInstance
  sources: ReadonlyMap<EnvironmentName, TokenSource>
  outbound: Outbound
  egress: EgressReporter
  metrics: ProxyMetrics
  rotation: CredentialRotation
  store: StateStore
  /** The callers file in force (SPEC §7), null without one; process/serve.ts reloads it. */
  callers: CallersHolder | null
  /** Changed variables a reload could not apply (compared at SIGHUP, process/reload.ts); shown in /readyz. */
  restart: RestartNotice
  /** What the features on provided (feature/feature.ts SharedParts): the console decides with them. */
  shared: Readonly<Partial<SharedParts>>
  /** SIGHUP for the features: each re-reads its files (the MCP tools file). */
  reloadFeatures: (trigger: string) => void
  /** Watches the features' files; returns the stop. */
  watchFeatures: () => () => void
}
