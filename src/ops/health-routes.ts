/**
 * `/healthz` (the process answers) and `/readyz` (every enabled environment holds a token that
 * can be sent now), shaped as SPEC §5 shows. Never a token; `expiresAt` is the provider's value.
 * They skip the client checks of the proxy routes: kubelet probes come from the node's address
 * with the pod IP as Host, and these answers hold nothing secret.
 */
import type { FastifyInstance } from 'fastify'
import type { EnvironmentName } from '../config/config.js'
import type { TokenSource } from '../tokens/token-source.js'
import type { EgressView } from '../egress/egress-reporter.js'
import type { RotationAttempt } from './credential-rotation.js'

export interface HealthRoutesOptions {
  sources: ReadonlyMap<EnvironmentName, TokenSource>
  egress: EgressView
  /** The shared store (SPEC §9): shown, never a reason to report not ready (tokens decide that). */
  state?: () => { ready: boolean }
  /** The last credential rotation per environment: a failed one is shown, readiness is still the token's. */
  rotation?: () => Partial<Record<EnvironmentName, RotationAttempt>>
  /** Variables changed since the start that only a restart applies: shown, not a reason to report not ready. */
  restartRequired?: () => readonly string[]
  /**
   * The features' sections (the inbox's, SPEC §10; the payments', SPEC §12), in this order: shown, never a reason to
   * report not ready.
   */
  sections?: readonly ReadinessSection[]
}

/** A `/readyz` section: shown, never a reason to report not ready (the tokens decide that); `read` never rejects. */
export interface ReadinessSection {
  readonly name: string
  readonly read: () => Promise<unknown>
}

export async function healthRoutes (app: FastifyInstance, options: HealthRoutesOptions): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }))

  app.get('/readyz', async (_request, reply) => {
    const environments: Record<string, { ready: boolean, expiresAt: number | null, rotation?: RotationAttempt }> = {}
    const rotations = options.rotation?.() ?? {}
    let ready = true
    for (const [name, source] of options.sources) {
      const status = source.status()
      const rotation = rotations[name]
      environments[name] = rotation === undefined ? status : { ...status, rotation }
      ready &&= status.ready
    }
    const body: Record<string, unknown> = { ready, environments, egressIp: options.egress.current() }
    const expected = options.egress.isExpected()
    if (expected !== null) body['egressIpExpected'] = expected
    if (options.state !== undefined) body['state'] = { ready: options.state().ready }
    const restartRequired = options.restartRequired?.() ?? []
    if (restartRequired.length > 0) body['restartRequired'] = restartRequired
    for (const section of options.sections ?? []) body[section.name] = await section.read()
    reply.code(ready ? 200 : 503).header('cache-control', 'no-store')
    return body
  })
}
