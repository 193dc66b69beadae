/**
 * The MCP server an agent talks to (SPEC §13), made per HTTP request as the stateless Streamable
 * HTTP transport wants it: the official SDK's `McpServer`, with `tools/list` and `tools/call`
 * answered from the catalogue rather than registered tool by tool, so that the listing is the
 * caller's own, the arguments are checked against the JSON Schemas the agent is shown (Ajv, with the
 * refusal the contract names, MCP_INVALID_ARGUMENTS), and the result shapes are SPEC §13's.
 */
import { McpServer, ProtocolError, ProtocolErrorCode, type McpRequestContext, type McpServerFactory } from '@modelcontextprotocol/server'
import type { CallerSpec } from '../callers/callers-file.js'
import type { EnvironmentName } from '../config/config.js'
import type { Agent, CallTool } from './tool-calls.js'
import { toolsFor, type CatalogueTool } from './tool-catalogue.js'

const SERVER_INFO = { name: 'payments-auth-proxy', version: '1' }

const INSTRUCTIONS = 'This server is a payments sidecar: its tools call the payments provider\'s API with credentials you never see, under limits an operator set for you. ' +
  'Give every request that moves money a unique externalReference, and when you retry, send the same externalReference with the same body. ' +
  'A result with status 202 and an approval means a person decides before anything is sent: check it with get_approval or repeat the same call later. ' +
  'An error result carries a code: fix the arguments for MCP_INVALID_ARGUMENTS; limits and permissions (AMOUNT_LIMIT_EXCEEDED, CALLER_NOT_PERMITTED) do not change on a retry.'

/**
 * The agent of one HTTP request, handed to the factory through the SDK's pass-through `authInfo`.
 * Held in a private field: the agent's `Authorization` (for the inner requests) is nothing the SDK
 * can enumerate, serialise or log.
 */
export class AgentContext {
  readonly #agent: Agent
  readonly #toolBody: Buffer | null
  constructor (agent: Agent, toolBody: Buffer | null) {
    this.#agent = agent
    this.#toolBody = toolBody
  }

  get agent (): Agent { return this.#agent }
  /** The request's tool call `body` argument as the agent wrote it (envelope-reading.ts); null without one. */
  get toolBody (): Buffer | null { return this.#toolBody }
}

export interface ServerFactoryDeps {
  catalogue: () => readonly CatalogueTool[]
  defaultEnvironment: EnvironmentName | null
  callTool: CallTool
}

interface CallerTools {
  catalogue: readonly CatalogueTool[]
  tools: readonly CatalogueTool[]
  byName: ReadonlyMap<string, CatalogueTool>
}

export function createServerFactory (deps: ServerFactoryDeps): McpServerFactory {
  // A caller's tools, worked out once per callers file and tools file in force (each reload makes new objects).
  const listed = new WeakMap<CallerSpec, CallerTools>()
  function toolsOf (caller: CallerSpec): CallerTools {
    const catalogue = deps.catalogue()
    const known = listed.get(caller)
    if (known !== undefined && known.catalogue === catalogue) return known
    const tools = toolsFor(caller, catalogue, deps.defaultEnvironment)
    const fresh = { catalogue, tools, byName: new Map(tools.map((t) => [t.listing.name, t])) }
    listed.set(caller, fresh)
    return fresh
  }

  return (ctx: McpRequestContext) => {
    const context = contextOf(ctx)
    const { agent } = context
    const { tools, byName } = toolsOf(agent.caller)
    const mcp = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS })
    mcp.server.registerCapabilities({ tools: { listChanged: false } })
    mcp.server.setRequestHandler('tools/list', () => ({ tools: tools.map((t) => t.listing) }))
    mcp.server.setRequestHandler('tools/call', async (request) => {
      const tool = byName.get(request.params.name)
      if (tool === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
      return await deps.callTool(agent, tool, request.params.arguments ?? {}, context.toolBody)
    })
    return mcp
  }
}

function contextOf (ctx: McpRequestContext): AgentContext {
  const held = ctx.authInfo?.extra?.['agent']
  if (!(held instanceof AgentContext)) throw new Error('an MCP server was asked for without the agent of its request')
  return held
}
