/**
 * A held request body read as strict JSON at most once per reading mode, however many steps of the
 * request read it: a caller's reference rule and amount limits, idempotency, the 401 retry. It is a
 * decoration of the request, so it goes with the request: a WeakMap keyed by the body would make
 * every young-generation collection walk an ephemeron table of the requests in flight
 * (docs/performance.md).
 */
import type { FastifyRequest } from 'fastify'
import { parseStrictJsonBytes, type StrictJson } from './strict-json.js'

export class HeldJson {
  #values: StrictJson | undefined
  #texts: StrictJson | undefined

  constructor (readonly bytes: Buffer) {}

  /** Numbers as values, or with `numbers: 'text'` as their exact source text (amounts). */
  read (numbers: 'value' | 'text' = 'value'): StrictJson {
    if (numbers === 'text') return (this.#texts ??= parseStrictJsonBytes(this.bytes, { numbers: 'text' }))
    return (this.#values ??= parseStrictJsonBytes(this.bytes))
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The held body as JSON, made by the first step that reads it (heldJsonOf). */
    heldJson: HeldJson | null
  }
}

/** The request's held body as JSON, or null when its body is not held (streamed, or none). */
export function heldJsonOf (request: FastifyRequest): HeldJson | null {
  if (request.heldJson === null && Buffer.isBuffer(request.body)) request.heldJson = new HeldJson(request.body)
  return request.heldJson
}
