/**
 * The core's steps of the pipeline (SPEC §7): the refusal while closing, the client access lists,
 * the path's reading, the audit line, and with a callers file the caller, its rules and its amount
 * limits; idempotent replay when on. The features add theirs by name (pipeline/steps.ts orders
 * them all).
 */
import { clientAccessHook } from '../access/client-access-hook.js'
import type { ClientAccess } from '../access/client-access.js'
import { amountLimitsPlugin } from '../callers/amount-limits-plugin.js'
import type { RefuseCaller } from '../callers/caller-refusals.js'
import type { CallersHolder } from '../callers/callers-holder.js'
import { callerIdentity, callerRules } from '../callers/callers-plugin.js'
import type { Clock } from '../clock.js'
import type { Config } from '../config/config.js'
import { requestRefusal } from '../http/request-refusal.js'
import { createIdempotencyMetrics } from '../idempotency/idempotency-metrics.js'
import { idempotency, inFlightTtlMs } from '../idempotency/idempotency-plugin.js'
import { createResponseRecorder, DEFAULT_RECORD_BODY_BYTES } from '../idempotency/response-recorder.js'
import { METRIC_PREFIX, type ProxyMetrics } from '../ops/metrics.js'
import { requestAudit, type RequestAuditOptions } from '../ops/request-audit.js'
import { pathGuard } from '../routing/path-guard.js'
import type { UpstreamResponseTap } from '../routing/upstream-response.js'
import type { StateStore } from '../state/state-store.js'
import type { PipelineStep } from './steps.js'

export interface CoreStepsDeps {
  config: Config
  store: StateStore
  clock: Clock
  metrics: ProxyMetrics
  access: ClientAccess
  callers: CallersHolder | null
  refuse: RefuseCaller | null
  via: RequestAuditOptions['via']
  activity: RequestAuditOptions['activity']
  isClosing: () => boolean
}

/**
 * The steps, and the recorder of answers for replay (undefined with idempotency off), which taps the upstream's
 * answers.
 */
export function coreSteps (deps: CoreStepsDeps): { steps: PipelineStep[], recorder: UpstreamResponseTap | undefined } {
  const { config, store, clock, metrics, access, callers, refuse } = deps
  const steps: PipelineStep[] = [
    { name: 'refuse', register: async (app) => { await app.register(requestRefusal, { isClosing: deps.isClosing }) } },
    { name: 'access', register: async (app) => { await app.register(clientAccessHook, { access }) } },
    { name: 'path', register: async (app) => { await app.register(pathGuard) } },
    { name: 'audit', register: async (app) => { await app.register(requestAudit, { metrics, via: deps.via, activity: deps.activity }) } },
  ]
  if (callers !== null && refuse !== null) {
    const callerOptions = { callers: callers.current, store, keyPointer: config.idempotency.keyPointer, refuse }
    steps.push({ name: 'identify', register: async (app) => { await app.register(callerIdentity, callerOptions) } })
    steps.push({ name: 'rules', register: async (app) => { await app.register(callerRules, callerOptions) } })
  }
  let recorder: UpstreamResponseTap | undefined
  if (config.idempotency.enabled) {
    const observer = createIdempotencyMetrics(metrics.registry, METRIC_PREFIX)
    recorder = createResponseRecorder({
      store,
      ttlMs: config.idempotency.ttlS * 1000,
      maxBodyBytes: DEFAULT_RECORD_BODY_BYTES,
      observer,
    })
    const options = { store, keyPointer: config.idempotency.keyPointer, inFlightTtlMs: inFlightTtlMs(config), observer }
    steps.push({ name: 'idempotency', register: async (app) => { await app.register(idempotency, options) } })
  }
  if (refuse !== null) steps.push({ name: 'amount', register: async (app) => { await app.register(amountLimitsPlugin, { store, clock, refuse }) } })
  return { steps, recorder }
}
