/**
 * The request pipeline as data: every proxied request meets these steps in this order (SPEC §7's
 * order of checks, with the refusals before it and the forward after it). The core and each
 * feature add their steps by name; server.ts registers them sorted by this list, so the order is
 * read here, not from the order of `register` calls.
 */
import type { FastifyInstance } from 'fastify'

export const STEP_ORDER = [
  /** MCP: marks a tool call's inner request, so each of its log lines names the tool. */
  'mark',
  /** Draining, a path outside the routes, forbidden headers. */
  'refuse',
  /** PROXY_ALLOWED_CLIENTS and PROXY_ALLOWED_HOSTS. */
  'access',
  /** The caller key (401). */
  'identify',
  /** SPEC §3's one reading of the path, after identity, before any rule judges it. */
  'path',
  /** `allow` (403), `rateLimit` (429), `requireExternalReference` (400). */
  'rules',
  /** The access line, written when the answer is sent. */
  'audit',
  /** SPEC §8: a replay, 409 or 422 answered here costs no amount. */
  'idempotency',
  /** SPEC §11: the retry of a held request, answered from its approval. */
  'retry',
  /** SPEC §16: a re-planned payout (same payout, another reference) held for a person or refused. */
  'duplicates',
  /** `amountLimits`: AMOUNT_UNREADABLE, AMOUNT_LIMIT_EXCEEDED. */
  'amount',
  /** SPEC §11: above `approveAbove`, held for a person. */
  'hold',
  /** SPEC §12: a payment's intent, written before it is forwarded. */
  'follow',
] as const

export type StepName = typeof STEP_ORDER[number]

export interface PipelineStep {
  readonly name: StepName
  readonly register: (app: FastifyInstance) => Promise<void>
}

/** The steps in STEP_ORDER; a name given twice is a wiring mistake and throws. */
export function orderSteps (steps: readonly PipelineStep[]): PipelineStep[] {
  const seen = new Set<StepName>()
  for (const step of steps) {
    if (seen.has(step.name)) throw new Error(`pipeline step ${step.name} added twice`)
    seen.add(step.name)
  }
  return [...steps].sort((a, b) => STEP_ORDER.indexOf(a.name) - STEP_ORDER.indexOf(b.name))
}
