/**
 * Which requests a tool call made (SPEC §13 audit), in a way no HTTP client can forge: the bridge
 * hands the mark over synchronously, in the one call that dispatches the inner request (Fastify's
 * `inject`, which routes and runs the first hook of the request before it returns), and the first
 * hook of every request claims it onto the request, where the access line and every log line of the
 * request find it. It is never a header, a query or a body; and no other request can be dispatched
 * inside that synchronous call, so none can pick the mark up.
 *
 * Not AsyncLocalStorage: on Node 20 and 22 its first use turns on promise hooks for the whole
 * process, which cost every HTTP request about 10% (docs/performance.md), and the mark is needed
 * only at dispatch.
 *
 * The mark also carries the inner request's target exactly as the tool built it: the injected
 * request's own URL is parsed as a WHATWG URL, which would resolve `..` before §3's reader sees it.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { CallerSpec } from '../callers/callers-file.js'
import type { ViaFields } from '../ops/access-line.js'

export interface ToolCallMark {
  tool: string
  /** The request target as the tool built it: what §3's reader reads. */
  target: string
  /**
   * SPEC §15: the caller an agent signed in with OAuth was judged to be at `/mcp`. Its token is no
   * caller key, so the inner request carries no `Authorization` and is this caller's from the start.
   */
  signedIn?: { caller: CallerSpec, clientId: string | null }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request was made by a tool call; null for every request from the listener. */
    toolCall: ToolCallMark | null
  }
}

/** The mark being handed over; set only for the duration of `dispatch` in runAsToolCall. */
let handing: ToolCallMark | null = null

/**
 * Runs `dispatch`, which must dispatch the inner request synchronously; throws when the request's
 * first hook did not claim the mark (it would otherwise run unmarked, at the placeholder URL).
 */
export function runAsToolCall<T> (mark: ToolCallMark, dispatch: () => T): T {
  handing = mark
  try {
    const dispatched = dispatch()
    if (handing !== null) throw new Error('a tool call\'s request was not dispatched at once: is the proxy listening?')
    return dispatched
  } finally {
    handing = null
  }
}

/** For Fastify's `rewriteUrl`: the target a tool call built, undefined for any other request. */
export function toolCallTarget (): string | undefined {
  return handing?.target
}

/** The access line's fields for a request a tool call made; null for the others. */
export function viaOf (request: FastifyRequest): ViaFields | null {
  const mark = request.toolCall
  if (mark === null) return null
  return mark.signedIn === undefined ? { via: 'mcp', tool: mark.tool } : { via: 'mcp', tool: mark.tool, auth: 'oauth', clientId: mark.signedIn.clientId }
}

/** Registered before every other hook, so that each of the request's log lines names the tool. */
export const markToolCalls = fp(async function markToolCalls (app: FastifyInstance) {
  app.decorateRequest('toolCall', null)
  app.addHook('onRequest', (request, _reply, done) => {
    const mark = handing
    if (mark !== null) {
      handing = null
      request.toolCall = mark
      const signedIn = mark.signedIn
      if (signedIn === undefined) request.log = request.log.child({ via: 'mcp', tool: mark.tool })
      else {
        request.caller = { id: signedIn.caller.id }
        request.callerSpec = signedIn.caller
        request.log = request.log.child({ via: 'mcp', tool: mark.tool, auth: 'oauth', clientId: signedIn.clientId })
      }
    }
    done()
  })
}, { name: 'mcp-tool-call-mark' })
