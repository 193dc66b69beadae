/**
 * `/mcp` on the proxy listener (SPEC §13): MCP over Streamable HTTP, stateless, served by the
 * official SDK's `createMcpHandler` (revision 2026-07-28, and earlier revisions as the SDK
 * negotiates them), mounted as a Fastify route so the listener's own refusals (draining, headers)
 * run first. Before anything else the route applies §5's client rules and §7's identity, in
 * onRequest, before the body is read: an unknown key is 401 with `WWW-Authenticate`, a browser's
 * `Origin` or a foreign `Host` 403. Then a GET (or any method but POST) is 405. The body is held
 * within its limit (413 past it) and read once (envelope-reading.ts): what is not one JSON-RPC
 * message is a parse error and a batch is refused, both here, and the SDK gets the message parsed,
 * never the bytes. The caller key is never handed to the SDK: the agent travels in `authInfo`.
 * With OAuth on (SPEC §15) a bearer value that is no caller key is judged as an access token, and
 * every 401 points the client at the protected resource's metadata.
 *
 * Why not @modelcontextprotocol/fastify: it builds a Fastify app of its own (ours has its plugin
 * order, error shape and lingering close) and its Origin check admits localhost origins, where
 * §5 refuses every Origin. Its Host check duplicates client-access.ts. (docs/agents.md)
 */
import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { McpHttpHandler } from '@modelcontextprotocol/server'
import type { ClientAccess } from '../access/client-access.js'
import type { CallerSpec } from '../callers/callers-file.js'
import { authorizationsOf } from '../callers/callers-plugin.js'
import type { RefuseCaller } from '../callers/caller-refusals.js'
import { bearerOf, identify, UNKNOWN_CALLER_KEY, type CallerIndex } from '../callers/judge-caller.js'
import type { TokenCallers } from '../callers/token-callers.js'
import { BodyTooLargeError, CallerUnauthenticatedError, ClientNotAllowedError, McpMethodNotAllowedError } from '../errors.js'
import { continueIfExpected, declaredLength, holdBody } from '../routing/request-body.js'
import { readEnvelope } from './envelope-reading.js'
import { AgentContext } from './mcp-server.js'

export interface McpEndpointOptions {
  callers: () => CallerIndex
  access: ClientAccess
  refuse: RefuseCaller
  handler: McpHttpHandler
  /** The JSON-RPC envelope's limit: the request body's limit and room for the envelope around it. */
  bodyLimitBytes: number
  /** SPEC §15: OAuth access tokens, when OAuth is on; null takes caller keys only. */
  tokens: TokenCallers | null
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller of an /mcp request, identified before its body is read. */
    mcpCaller: CallerSpec | null
    /** Set when that caller was reached with an OAuth access token (SPEC §15). */
    mcpSignedIn: { caller: CallerSpec, clientId: string | null } | null
  }
}

export const MCP_PATH = '/mcp'
/** What the SDK sees as its request's URL: it routes nothing on it. */
const MCP_URL = `http://localhost${MCP_PATH}`
const BATCH_REFUSED = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not accepted; send one message per POST' } }
/** The SDK's own answer to a body it cannot parse, status included. */
const PARSE_ERROR = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body must be one JSON-RPC message, a JSON object in UTF-8 without a byte-order mark' } }
/** Never passed to the SDK: the key, the cookies, and what the web Request sets itself. */
const NOT_PASSED = new Set(['authorization', 'cookie', 'host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive'])

export async function mcpEndpoint (app: FastifyInstance, options: McpEndpointOptions): Promise<void> {
  const { access, refuse, handler, bodyLimitBytes, tokens } = options

  app.decorateRequest('mcpCaller', null)
  app.decorateRequest('mcpSignedIn', null)
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (request, payload, done) => {
    continueIfExpected(request.raw)
    holdBody(payload, bodyLimitBytes).then((body) => { done(null, body) }, done)
  })

  app.addHook('onRequest', async (request) => {
    const remoteAddress = request.raw.socket.remoteAddress
    const decision = access.check(remoteAddress, request.headers)
    if (!decision.ok) {
      request.log.warn({ reason: decision.reason, remoteAddress }, 'client refused')
      throw new ClientNotAllowedError(`Refused: ${decision.reason}`)
    }
    const authorizations = authorizationsOf(request)
    const peer = remoteAddress ?? ''
    let caller = identify(options.callers(), { authorizations, peer })
    if (typeof caller === 'string') {
      // SPEC §15: a caller key is judged first; a bearer value that is none may be an access token.
      const token = tokens !== null && caller === UNKNOWN_CALLER_KEY ? bearerOf(authorizations[0] ?? '') : undefined
      if (tokens === null || token === undefined) throw refuse(request, 'anonymous', new CallerUnauthenticatedError(caller, tokens?.challenge))
      const verdict = await tokens.judge(token, peer)
      if (!verdict.ok) throw refuse(request, 'anonymous', verdict.error)
      caller = verdict.caller
      request.mcpSignedIn = { caller, clientId: verdict.clientId }
      request.log = request.log.child({ auth: 'oauth', clientId: verdict.clientId })
    }
    // Not `callerSpec`: the root hooks of proxied requests read that one (a reference rule would judge
    // the JSON-RPC envelope). `caller` only labels the /mcp request's own refusals in the metrics.
    request.caller = { id: caller.id }
    request.mcpCaller = caller
    const length = declaredLength(request.raw)
    if (length !== null && length > bodyLimitBytes) throw new BodyTooLargeError(bodyLimitBytes)
  })

  app.post(MCP_PATH, async (request, reply) => await serve(request, reply))
  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'],
    url: MCP_PATH,
    handler: async (request, reply) => {
      reply.header('allow', 'POST')
      throw new McpMethodNotAllowedError(request.method)
    },
  })

  async function serve (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const caller = request.mcpCaller
    if (caller === null) throw new Error('/mcp served without a caller')
    const reading = readEnvelope(Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0))
    // A batch would be several tool calls in one request; the 2025-03-26 revision allowed them and the
    // SDK's stateless fallback still serves them. No revision this endpoint speaks needs them.
    if (reading.kind === 'batch') return await reply.code(400).type('application/json').send(BATCH_REFUSED)
    if (reading.kind === 'parse-error') return await reply.code(400).type('application/json').send(PARSE_ERROR)
    const agent = new AgentContext({
      caller,
      origin: {
        ...(request.mcpSignedIn === null
          ? { authorization: request.headers.authorization }
          : { authorization: undefined, signedIn: request.mcpSignedIn }),
        remoteAddress: request.raw.socket.remoteAddress ?? '',
        host: request.headers.host ?? 'localhost',
        requestId: request.id,
      },
    }, reading.toolBody)
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string' && !NOT_PASSED.has(name)) headers[name] = value
    }
    const authInfo = { token: '', clientId: caller.id, scopes: [], extra: { agent } }
    // Handed over parsed, the SDK neither reads the web Request (it has no body) nor parses again.
    const response = await handler.fetch(new Request(MCP_URL, { method: 'POST', headers }), { authInfo, parsedBody: reading.message })
    reply.code(response.status)
    response.headers.forEach((value, name) => { reply.header(name, value) })
    if (response.body === null) return await reply.send()
    // An answer streamed as events (2025 revisions) streams; a JSON answer is sent whole.
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return await reply.send(Readable.fromWeb(response.body))
    return await reply.send(Buffer.from(await response.arrayBuffer()))
  }
}
