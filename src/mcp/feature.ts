/** Agents over MCP (SPEC §13) as a feature: the `check` section of the tools file. */
import type { Feature } from '../feature/feature.js'

export const mcpFeature: Feature = {
  name: 'mcp',
  async check ({ config }) {
    if (!config.mcp.enabled || config.mcp.toolsFile === null) return null
    const tools = (await import('./tools-file.js')).readToolsFile(config.mcp.toolsFile, config.paths)
    return tools.ok
      ? { ok: true, lines: [`ok    MCP tools file: ${tools.tools.length} tools`] }
      : { ok: false, lines: tools.problems.map((problem) => `FAIL  MCP tools file: ${problem}`) }
  },
}
