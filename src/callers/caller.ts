/**
 * The caller a request was identified as (SPEC §7). Without a callers file there is one anonymous
 * caller, so later stages (idempotency records, audit, metrics) always have an id to key on.
 */
import type { FastifyRequest } from 'fastify'

export interface Caller {
  /** From the callers file. Bounded by the file, so safe as a metric label. */
  id: string
}

export const ANONYMOUS_CALLER_ID = 'anonymous'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the callers plugin once identified; null without a callers file. */
    caller: Caller | null
  }
}

export function callerIdOf (request: FastifyRequest): string {
  return request.caller?.id ?? ANONYMOUS_CALLER_ID
}
