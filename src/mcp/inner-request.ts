/**
 * The bridge (SPEC §13): a tool call becomes a request through the proxy's own pipeline, with
 * Fastify's `inject`, so identity, the client rules, §3's path reading, `allow`, the rate limit,
 * §8, amount limits, approvals and §12 are the code an HTTP request meets, not a copy of it. The
 * request carries what the agent's HTTP request carried: its `Authorization` as sent and its peer
 * address (identity and `sources` are judged again, the same way), its `Host`, and its request id
 * so both lines of a call share one. It is marked as a tool call (tool-call-mark.ts) for the audit.
 * Measured against a shared function below the routes in docs/performance.md.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { ShuttingDownError } from '../errors.js'
import type { InnerAnswer } from './tool-result.js'
import { runAsToolCall, type ToolCallMark } from './tool-call-mark.js'

/** Who made the tool call: what its HTTP request to /mcp carried. */
export interface CallOrigin {
  /** Undefined for an agent signed in with OAuth: its token is no caller key (SPEC §15). */
  authorization: string | undefined
  signedIn?: ToolCallMark['signedIn']
  remoteAddress: string
  host: string
  requestId: string
}

export interface InnerCall {
  tool: string
  method: string
  /** Path and query string as they would stand on an HTTP request line. */
  target: string
  /** JSON bytes; null for none. */
  body: Buffer | null
}

export type SendInner = (origin: CallOrigin, call: InnerCall) => Promise<InnerAnswer>

/** The injected request's URL is only a placeholder: the target is read from the mark (tool-call-mark.ts). */
const PLACEHOLDER_URL = '/'
/** light-my-request adds its own name otherwise; the provider sees the proxy's name for a tool call. */
const USER_AGENT = 'payments-auth-proxy (MCP tool call)'

export function createInnerRequests (app: FastifyInstance): SendInner {
  return async (origin, call) => {
    const headers: Record<string, string> = { host: origin.host, 'x-request-id': origin.requestId, 'user-agent': USER_AGENT }
    if (origin.authorization !== undefined) headers['authorization'] = origin.authorization
    if (call.body !== null) headers['content-type'] = 'application/json'
    const options = {
      method: call.method,
      url: PLACEHOLDER_URL,
      headers,
      payload: call.body ?? undefined,
      remoteAddress: origin.remoteAddress,
      // Its option check compiles a schema per call; these options are ours.
      validate: false,
    }
    // The callback form dispatches at once (the proxy is listening), while the mark is handed over.
    // The promise form returns a chain that starts when it is awaited, after it.
    const response = await new Promise<LightMyRequestResponse>((resolve, reject) => {
      const mark: ToolCallMark = { tool: call.tool, target: call.target }
      if (origin.signedIn !== undefined) mark.signedIn = origin.signedIn
      runAsToolCall(mark, () => {
        app.inject(options, (err, res) => {
          // Closing (SPEC §5 shutdown): the tool call gets what a new request would, not a 500.
          if (err !== undefined && err !== null) reject((err as { code?: unknown }).code === 'FST_ERR_REOPENED_CLOSE_SERVER' ? new ShuttingDownError() : err)
          else if (res !== undefined) resolve(res)
        })
      })
    })
    return { status: response.statusCode, headers: response.headers, body: response.rawPayload }
  }
}
