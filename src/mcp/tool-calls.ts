/**
 * A tool call, carried out (SPEC §13): its arguments checked against its schema, then, for a tool
 * that makes a request, the request built from them and sent through the proxy's own pipeline
 * (inner-request.ts), whose answer becomes the result; a feature's tool as the feature says
 * (feature/feature-tools.ts), its look-ups sent the same way. Every call is counted by caller, tool
 * and outcome.
 */
import type { Logger } from 'pino'
import type { CallerSpec } from '../callers/callers-file.js'
import { InternalError, McpInvalidArgumentsError, ProxyError } from '../errors.js'
import type { FeatureTool } from '../feature/feature-tools.js'
import type { PathOptions } from '../routing/canonical-path.js'
import type { CallOrigin, InnerCall, SendInner } from './inner-request.js'
import type { McpMetrics } from './mcp-metrics.js'
import { fillTemplate } from './path-template.js'
import type { CatalogueTool } from './tool-catalogue.js'
import { errorResult, lookupResult, outcomeOf, requestResult, valueResult, type ToolResult } from './tool-result.js'
import type { OperatorTool } from './tools-file.js'

export interface Agent {
  caller: CallerSpec
  origin: CallOrigin
}

export interface ToolCallsDeps {
  send: SendInner
  paths: PathOptions
  metrics: McpMetrics
  log: Logger
}

/**
 * `body`: the `body` argument's bytes as they stood in the envelope (envelope-reading.ts), sent as they are; null
 * without one.
 */
export type CallTool = (
  agent: Agent,
  tool: CatalogueTool,
  args: Record<string, unknown>,
  body: Buffer | null,
) => Promise<ToolResult>

export function createToolCalls (deps: ToolCallsDeps): CallTool {
  const { send, paths, metrics, log } = deps

  async function run (
    agent: Agent,
    tool: CatalogueTool,
    args: Record<string, unknown>,
    body: Buffer | null,
  ): Promise<ToolResult> {
    const refused = tool.check(args)
    if (refused !== null) return errorResult(refused)
    const name = tool.listing.name
    const { action } = tool
    switch (action.kind) {
      case 'request':
        return await request(agent, { tool: name, method: String(args['method']), target: requestTarget(args['environment'], args['interface'], String(args['path'])) + queryOf(args['query']), body })
      case 'operator': {
        const call = operatorCall(action.tool, args, body, paths)
        return call instanceof McpInvalidArgumentsError ? errorResult(call) : await request(agent, call)
      }
      case 'feature':
        return await featureCall(agent, name, action.call, args)
    }
  }

  async function request (agent: Agent, call: InnerCall): Promise<ToolResult> {
    return requestResult(await send(agent.origin, call))
  }

  async function featureCall (agent: Agent, name: string, call: FeatureTool['call'], args: Record<string, unknown>): Promise<ToolResult> {
    const answer = await call(agent.caller, args)
    if ('value' in answer) return valueResult(answer.value)
    return lookupResult(await send(agent.origin, { tool: name, method: 'GET', target: answer.get + queryOf(answer.query), body: null }))
  }

  return async (agent, tool, args, body) => {
    let result: ToolResult
    try {
      result = await run(agent, tool, args, body)
    } catch (err) {
      if (err instanceof ProxyError) result = errorResult(err)
      else {
        log.error({ err, caller: agent.caller.id, tool: tool.listing.name }, 'tool call failed')
        result = errorResult(new InternalError(err))
      }
    }
    metrics.called(agent.caller.id, tool.listing.name, outcomeOf(result))
    return result
  }
}

/** `/{environment}/{interface}{path}`, or the default environment's `/{interface}{path}` (SPEC §3's short routes). */
function requestTarget (environment: unknown, iface: unknown, path: string): string {
  return `${typeof environment === 'string' ? `/${environment}` : ''}/${String(iface)}${path}`
}

function operatorCall (
  tool: OperatorTool,
  args: Record<string, unknown>,
  body: Buffer | null,
  paths: PathOptions,
): InnerCall | McpInvalidArgumentsError {
  const path = fillTemplate(tool.template, args, paths)
  if (path instanceof McpInvalidArgumentsError) return path
  const query = args['query']
  if (query !== undefined && (typeof query !== 'object' || query === null || Object.values(query).some((v) => typeof v !== 'string'))) {
    return new McpInvalidArgumentsError('arguments.query', 'must be an object of strings')
  }
  return {
    tool: tool.name,
    method: tool.method,
    target: requestTarget(tool.environment, tool.interface, path) + queryOf(query),
    body,
  }
}

/** `?a=1&b=x%20y` from an object of strings (absent members skipped); '' when there is none. */
function queryOf (query: unknown): string {
  if (typeof query !== 'object' || query === null) return ''
  const pairs = Object.entries(query).filter((e): e is [string, string] => typeof e[1] === 'string')
  return pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`
}
