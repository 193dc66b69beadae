/** SPEC §13's settings: `/mcp` on the proxy listener, and the operator's tools file. */
import type { SettingsInput } from '../feature/feature-settings.js'
import type { Config } from '../config/config.js'

/** An agent is known by its caller key, so MCP needs a callers file. */
export function resolveMcp ({ settings, problems, warnings }: SettingsInput): { mcp: Config['mcp'] } {
  const enabled = settings.PROXY_MCP === 'on'
  const toolsFile = settings.PROXY_MCP_TOOLS_FILE ?? null
  if (enabled && settings.PROXY_CALLERS_FILE === undefined) problems.push('PROXY_MCP=on needs PROXY_CALLERS_FILE: agents over MCP are identified by their caller key (SPEC §13)')
  if (!enabled && toolsFile !== null) warnings.push('PROXY_MCP_TOOLS_FILE is set but PROXY_MCP is off: the tools are not served')
  return { mcp: { enabled, toolsFile } }
}
