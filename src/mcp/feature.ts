/** Agents over MCP (SPEC §13) as a feature: its share of the proxy and the `check` section of the tools file. */
import type { Feature } from '../feature/feature.js'
import { resolveMcp } from './mcp-settings.js'

export const mcpFeature: Feature = {
  name: 'mcp',
  settings: resolveMcp,
  // An agent is known by its caller key: configuration refuses PROXY_MCP=on without a callers file.
  proxy: async (context) => {
    const { callers } = context
    return !context.config.mcp.enabled || callers === null ? null : (await import('./mcp-part.js')).mcpPart({ ...context, callers })
  },
  async check ({ config }) {
    if (!config.mcp.enabled || config.mcp.toolsFile === null) return null
    const tools = (await import('./tools-file.js')).readToolsFile(config.mcp.toolsFile, config.paths)
    return tools.ok
      ? { ok: true, lines: [`ok    MCP tools file: ${tools.tools.length} tools`] }
      : { ok: false, lines: tools.problems.map((problem) => `FAIL  MCP tools file: ${problem}`) }
  },
}
