/**
 * Carries out SPEC §7's checks before the amount step, in the SPEC's order: identity 401 -> (the
 * path guard, SPEC §3) -> allow 403 -> rate 429 (onRequest, before any body is read) ->
 * requireExternalReference 400 (preHandler, on the held body). Every refusal is logged at warn with the caller id and
 * code, counted, and reaches no upstream.
 *
 * Rate limits go through the state store's `hit` rather than @fastify/rate-limit: a sliding window
 * (its fixed window lets a caller spend twice its limit across a window's edge: docs/callers.md),
 * one store contract for records, windows and day totals (memory or Redis alike), a store failure
 * failing closed with 503 STATE_UNAVAILABLE, and the check after identity and allow, before the body.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import {
  CallerNotPermittedError, CallerRateLimitedError, CallerUnauthenticatedError, ExternalReferenceRequiredError,
} from '../errors.js'
import { heldJsonOf } from '../json/held-json.js'
import { readReference } from '../json/reference.js'
import type { StateStore } from '../state/state-store.js'
import type { CallerSpec } from './callers-file.js'
import { BODY_METHODS } from './amount-limits.js'
import type { RefuseCaller } from './caller-refusals.js'
import { firstMismatch, identify, type CallerIndex, type Mismatch } from './judge-caller.js'
import { loggablePath } from '../routing/canonical-path.js'
import type { RequestTarget } from '../routing/request-target.js'

export interface CallersPluginOptions {
  /** The current callers; reload swaps what this returns. */
  callers: () => CallerIndex
  store: StateStore
  keyPointer: string
  /** Logs and counts a refusal; shared with the amount step. */
  refuse: RefuseCaller
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The matched caller's rules, for the later steps (amount limits). */
    callerSpec: CallerSpec | null
  }
}

/** Says which field no rule admitted, so "wrong environment" is not read as "wrong path". */
function notPermittedMessage (callerId: string, mismatch: Mismatch, method: string, target: RequestTarget): string {
  const environment = target.route.environment ?? 'either environment'
  const asked = `${method} ${loggablePath(target.path)} on ${environment} ${target.route.interface}`
  const field = mismatch === 'environment' ? `the ${environment} environment` : mismatch === 'interface' ? `the ${target.route.interface} interface` : mismatch === 'method' ? `the method ${method}` : 'this path'
  return `Caller ${callerId} is not permitted ${asked}: none of its allow rules admits ${field}${mismatch === 'environment' || mismatch === 'interface' ? '' : ' there'}`
}

/** Every Authorization value the client sent (Node keeps only the first in `headers`). */
export function authorizationsOf (request: FastifyRequest): string[] {
  const raw = request.raw.rawHeaders
  const values: string[] = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === 'authorization') values.push(raw[i + 1] ?? '')
  }
  return values
}

/** Identity (401): first, so that every later refusal, the path guard's included, names the caller. */
export const callerIdentity = fp(async function callerIdentity (app: FastifyInstance, options: CallersPluginOptions) {
  const { refuse } = options
  app.decorateRequest('callerSpec', null)

  app.addHook('onRequest', (request, _reply, done) => {
    const target = request.target
    if (target === null) { done(); return }
    // Identified before this step: a tool call of an agent signed in with OAuth (SPEC §15), whose
    // token is no caller key and was judged at /mcp; its request carries no Authorization.
    if (request.callerSpec !== null) { done(); return }
    const authorizations = authorizationsOf(request)
    // The caller key is consumed here: it is never forwarded (header-policy drops it too) nor logged.
    // Assigned rather than deleted: `delete` would turn the headers object into a dictionary,
    // slowing every later read of it on this request.
    request.headers.authorization = undefined
    const caller = identify(options.callers(), { authorizations, peer: request.raw.socket.remoteAddress ?? '' })
    if (typeof caller === 'string') { done(refuse(request, 'anonymous', new CallerUnauthenticatedError(caller))); return }
    request.caller = { id: caller.id }
    request.callerSpec = caller
    done()
  })
}, { name: 'caller-identity' })

/** `allow` 403, rate 429 (before any body is read), then the reference 400 on the held body. */
export const callerRules = fp(async function callerRules (app: FastifyInstance, options: CallersPluginOptions) {
  const { refuse } = options

  app.addHook('onRequest', async (request) => {
    const target = request.target
    const caller = request.callerSpec
    if (target === null || caller === null) return
    const facts = {
      environment: target.route.environment,
      interface: target.route.interface,
      method: request.method,
      path: target.folded,
    }
    const mismatch = firstMismatch(caller, facts)
    if (mismatch !== null) {
      throw refuse(
        request,
        caller.id,
        new CallerNotPermittedError(notPermittedMessage(caller.id, mismatch, request.method, target)),
        mismatch,
      )
    }
    if (caller.rateLimit !== null) {
      const { requests, perSeconds } = caller.rateLimit
      const rate = await options.store.hit(`rate:${caller.id}`, requests, perSeconds * 1000)
      if (!rate.admitted) throw refuse(
        request,
        caller.id,
        new CallerRateLimitedError(Math.max(1, Math.ceil(rate.retryAfterMs / 1000))),
      )
    }
    if (BODY_METHODS.has(request.method) &&
      (caller.requireExternalReference || caller.amountLimits.length > 0)) request.holdBody = true
  })

  app.addHook('preHandler', async (request) => {
    const caller = request.callerSpec
    if (caller === null || !caller.requireExternalReference || !BODY_METHODS.has(request.method)) return
    if (readReference(heldJsonOf(request), request.headers['content-encoding'], options.keyPointer).kind === 'found') return
    throw refuse(request, caller.id, new ExternalReferenceRequiredError(`Caller ${caller.id} must send a non-empty string reference at ${options.keyPointer}`))
  })
}, { name: 'caller-rules', dependencies: ['caller-identity'] })
