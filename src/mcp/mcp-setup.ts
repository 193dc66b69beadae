/**
 * Puts agents over MCP (SPEC §13) together for server.ts, which imports this module only when
 * `PROXY_MCP=on`: the tool catalogue (the tools file read at start, an invalid one stopping it),
 * the hook that marks a tool call's requests (registered before every other hook), the target a
 * tool call built (for `rewriteUrl`), and, once the proxy's routes exist, `/mcp` and the bridge.
 */
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { createMcpHandler } from '@modelcontextprotocol/server'
import type { ClientAccess } from '../access/client-access.js'
import type { RefuseCaller } from '../callers/caller-refusals.js'
import type { CallerIndex } from '../callers/judge-caller.js'
import type { TokenCallers } from '../callers/token-callers.js'
import type { Config } from '../config/config.js'
import type { FeatureTool } from '../feature/feature-tools.js'
import type { Registry } from 'prom-client'
import { createInnerRequests } from './inner-request.js'
import { mcpEndpoint } from './mcp-endpoint.js'
import { createMcpMetrics } from './mcp-metrics.js'
import { createServerFactory } from './mcp-server.js'
import { createToolCalls } from './tool-calls.js'
import { createToolsHolder, type ToolsHolder } from './tools-holder.js'

export { markToolCalls, toolCallTarget, viaOf } from './tool-call-mark.js'

/**
 * Room for the JSON-RPC envelope around a body of PROXY_BODY_LIMIT_BYTES (the body's own limit applies to the inner
 * request).
 */
export const MCP_ENVELOPE_BYTES = 64 * 1024

/** Throws ConfigError, naming the tools file and field, when the start cannot serve the tools. */
export function prepareTools (config: Config, featureTools: readonly FeatureTool[], log: Logger): ToolsHolder {
  return createToolsHolder(config.mcp.toolsFile, config.paths, featureTools, log)
}

export interface McpDeps {
  tools: ToolsHolder
  callers: () => CallerIndex
  access: ClientAccess
  refuse: RefuseCaller
  tokens: TokenCallers | null
  registry: Registry
  metricPrefix: string
  log: Logger
}

export async function registerMcp (app: FastifyInstance, config: Config, deps: McpDeps): Promise<void> {
  const callTool = createToolCalls({
    send: createInnerRequests(app),
    paths: config.paths,
    metrics: createMcpMetrics(deps.registry, deps.metricPrefix),
    log: deps.log,
  })
  const handler = createMcpHandler(createServerFactory({
    catalogue: deps.tools.current,
    defaultEnvironment: config.defaultEnvironment,
    callTool,
  }), {
    // Reporting only: what the SDK refused was answered to the client already.
    onerror: (err) => { deps.log.debug({ err }, 'MCP request refused by the protocol layer') },
  })
  app.addHook('onClose', async () => { await handler.close() })
  await app.register(mcpEndpoint, {
    callers: deps.callers,
    access: deps.access,
    refuse: deps.refuse,
    tokens: deps.tokens,
    handler,
    bodyLimitBytes: config.bodyLimitBytes + MCP_ENVELOPE_BYTES,
  })
}
