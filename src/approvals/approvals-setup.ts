/**
 * Puts approvals (SPEC §11) together for server.ts: at start, the checks and the store (only when a
 * caller uses approveAbove, so a proxy without approvals never loads SQLite); once the proxy's parts
 * exist, the HTTP routes, the forwarder and the worker that acts on decisions.
 */
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import type { Dispatcher } from 'undici'
import type { ClientAccess } from '../access/client-access.js'
import type { CallerIndex } from '../callers/judge-caller.js'
import type { Clock } from '../clock.js'
import type { Config, EnvironmentName } from '../config/config.js'
import { ConfigError } from '../config/config-error.js'
import { buildRouteTable } from '../routing/route-table.js'
import type { StateStore } from '../state/state-store.js'
import type { Storage } from '../storage/storage.js'
import type { TokenSource } from '../tokens/token-source.js'
import { createApprovalForwarder, type SendFollower } from './approval-forwarder.js'
import type { ApprovalMetrics } from './approval-metrics.js'
import { approvalRoutes } from './approval-routes.js'
import { deriveSealKey, type SealKey } from './approval-seal.js'
import { checkApprovalStart } from './approval-start-checks.js'
import type { ApprovalStore } from './approval-store.js'
import { HeldMarks } from './held-marks.js'
import { openApprovalStore } from './open-approval-store.js'
import { openApprovalNotifier, type ApprovalNotifier } from './approval-notifier.js'
import { approvalRetentionMs, createApprovalWorker, type ApprovalWorker } from './approval-worker.js'
import { createRecordVerifier, type RecordVerifier } from './record-verifier.js'

export interface PreparedApprovals {
  store: ApprovalStore
  sealKey: SealKey
  ttlMs: number
  notifier: ApprovalNotifier | null
  marks: HeldMarks
  /** How long a decided approval is kept (approvalRetentionMs). */
  retentionMs: number
}
export interface ApprovalsInUse extends PreparedApprovals {
  metrics: ApprovalMetrics
  clock: Clock
  verifier: RecordVerifier
}

/** Null when no caller uses approveAbove; throws ConfigError when the start cannot have approvals. */
export async function prepareApprovals (
  config: Config,
  index: CallerIndex,
  deps: { log: Logger, clock: Clock, registry: Registry, storage: Storage },
): Promise<PreparedApprovals | null> {
  const { log, clock, registry, storage } = deps
  const callers = index.all
  const check = checkApprovalStart(callers, config)
  if (check.problems.length > 0) throw new ConfigError(check.problems)
  for (const warning of check.warnings) log.warn({ warning }, 'configuration warning')
  if (!check.used || config.approvals.sealingSecret === null) return null
  const store = await openApprovalStore(config, storage, log)
  const notifier = await openApprovalNotifier(config, { log, clock, registry, storage })
  return {
    store,
    sealKey: deriveSealKey(config.approvals.sealingSecret),
    ttlMs: config.approvals.ttlS * 1000,
    notifier,
    marks: new HeldMarks(),
    retentionMs: approvalRetentionMs(config.idempotency.ttlS * 1000),
  }
}

/** Once the metrics exist: the one verifier every reading of a record goes through. */
export function approvalsInUse (
  prepared: PreparedApprovals,
  metrics: ApprovalMetrics,
  clock: Clock,
  log: Logger,
): ApprovalsInUse {
  return { ...prepared, metrics, clock, verifier: createRecordVerifier(prepared.sealKey, log, metrics) }
}

export interface RegisterDeps {
  config: Config
  callers: () => CallerIndex
  access: ClientAccess
  state: StateStore
  sources: ReadonlyMap<EnvironmentName, TokenSource>
  dispatcher: Dispatcher
  log: Logger
  inFlightTtlMs: number
  recordTtlMs: number
  /** Payments (SPEC §12), when on: an approved request is followed once it is forwarded. */
  follow?: SendFollower | null
}

/** The routes, and the worker (started by server.ts once the proxy is ready). */
export async function registerApprovals (
  app: FastifyInstance,
  approvals: ApprovalsInUse,
  deps: RegisterDeps,
): Promise<ApprovalWorker> {
  const { store, metrics, clock, verifier } = approvals
  const routes = buildRouteTable(deps.config)
  // The base a record's environment and interface forward to now, spelled as a hold stores it.
  const upstreamOf = (environment: string, iface: string): string | null => {
    const upstream = routes.find((r) => r.prefix === `/${environment}/${iface}`)?.upstream
    return upstream === undefined || upstream === null ? null : `${upstream.origin}${upstream.basePath}`
  }
  const forward = createApprovalForwarder({
    approvals: store,
    state: deps.state,
    sources: deps.sources,
    dispatcher: deps.dispatcher,
    verifier,
    upstreamOf,
    log: deps.log,
    metrics,
    recordTtlMs: deps.recordTtlMs,
    inFlightTtlMs: deps.inFlightTtlMs,
    follow: deps.follow,
  })
  const worker = createApprovalWorker({
    approvals: store,
    state: deps.state,
    forward,
    clock,
    log: deps.log,
    metrics,
    verifier,
    notifier: approvals.notifier,
    marks: approvals.marks,
    retentionMs: approvals.retentionMs,
  })
  await app.register(approvalRoutes, {
    callers: deps.callers,
    access: deps.access,
    store,
    clock,
    verifier,
    metrics,
    state: deps.state,
    decided: worker.nudge,
  })
  return worker
}
