/**
 * MCP's share of the proxy (SPEC §13), loaded only with PROXY_MCP=on (the SDK is a large module):
 * the tools in force (those the features before it in the list offered among them), the `mark`
 * step first of every request's hooks (each line a tool call's request logs names the tool), the
 * target a tool call built, `via` on the access line, `/mcp`.
 */
import type { CallersHolder } from '../callers/callers-holder.js'
import type { ProxyContext, ProxyPart } from '../feature/feature.js'
import { METRIC_PREFIX } from '../ops/metrics.js'
import { markToolCalls, prepareTools, registerMcp, toolCallTarget, viaOf } from './mcp-setup.js'

export function mcpPart (context: ProxyContext & { callers: CallersHolder }): ProxyPart {
  const { config, log, callers, shared } = context
  const tools = prepareTools(config, shared.tools ?? [], log)
  return {
    target: toolCallTarget,
    steps: () => [{ name: 'mark', register: async (app) => { await app.register(markToolCalls) } }],
    via: viaOf,
    async register (app, parts) {
      if (parts.refuse === null) return
      await registerMcp(app, config, {
        tools,
        callers: callers.current,
        access: parts.access,
        refuse: parts.refuse,
        tokens: shared.mcpTokens ?? null,
        registry: context.registry,
        metricPrefix: METRIC_PREFIX,
        log,
      })
    },
    reload: (trigger) => { tools.reload(trigger) },
    watch: () => tools.watch(),
  }
}
