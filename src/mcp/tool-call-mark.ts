/**
 * Which requests a tool call made (SPEC §13 audit), in a way no HTTP client can forge: the bridge
 * makes each inner request inside an AsyncLocalStorage context, and the first hook of every request
 * copies that context onto the request, where the access line and every log line of the request
 * find it. It is never a header, a query or a body: a client of the listener has no way to set it.
 * The same context carries the inner request's target exactly as the tool built it (the injected
 * request's URL is parsed as a WHATWG URL, which would resolve `..` before §3's reader sees it).
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'

export interface ToolCallMark {
  tool: string
  /** The request target as the tool built it: what §3's reader reads. */
  target: string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request was made by a tool call; null for every request from the listener. */
    toolCall: ToolCallMark | null
  }
}

const calls = new AsyncLocalStorage<ToolCallMark>()

export function runAsToolCall<T> (mark: ToolCallMark, make: () => T): T {
  return calls.run(mark, make)
}

/** For Fastify's `rewriteUrl`: the target a tool call built, undefined for any other request. */
export function toolCallTarget (): string | undefined {
  return calls.getStore()?.target
}

/** The access line's fields for a request a tool call made; null for the others. */
export function viaOf (request: FastifyRequest): { via: 'mcp', tool: string } | null {
  return request.toolCall === null ? null : { via: 'mcp', tool: request.toolCall.tool }
}

/** Registered before every other hook, so that each of the request's log lines names the tool. */
export const markToolCalls = fp(async function markToolCalls (app: FastifyInstance) {
  app.decorateRequest('toolCall', null)
  app.addHook('onRequest', (request, _reply, done) => {
    const mark = calls.getStore()
    if (mark !== undefined) {
      request.toolCall = mark
      request.log = request.log.child({ via: 'mcp', tool: mark.tool })
    }
    done()
  })
}, { name: 'mcp-tool-call-mark' })
