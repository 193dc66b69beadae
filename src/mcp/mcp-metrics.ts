/**
 * `mcp_tool_calls_total{caller,tool,outcome}` (SPEC §13): tool names come from the catalogue, so the labels stay
 * bounded.
 */
import { Counter, type Registry } from 'prom-client'
import type { ToolOutcome } from './tool-result.js'

export interface McpMetrics {
  called: (caller: string, tool: string, outcome: ToolOutcome) => void
}

export function createMcpMetrics (registry: Registry, metricPrefix: string): McpMetrics {
  const calls = new Counter({
    name: `${metricPrefix}mcp_tool_calls_total`,
    help: 'MCP tool calls by caller, tool and outcome (ok, held, replayed, refused, failed, invalid_arguments)',
    labelNames: ['caller', 'tool', 'outcome'],
    registers: [registry],
  })
  return { called: (caller, tool, outcome) => { calls.inc({ caller, tool, outcome }) } }
}
