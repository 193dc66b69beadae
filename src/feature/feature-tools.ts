/**
 * The tools a feature gives agents over MCP (SPEC §13): each is listed to every caller while its
 * feature is on, and carried out as its feature says. A feature offers its own in its share of the
 * proxy; MCP, later in the features list, serves what was offered in the list's order (the order
 * `tools/list` shows them) and names no feature.
 */
import type { Tool } from '@modelcontextprotocol/server'
import type { CallerSpec } from '../callers/callers-file.js'
import type { SharedParts } from './feature.js'

/** A tool as `tools/list` shows it. */
export type ToolListing = Tool & { title: string, description: string }

/** What a call of a feature's tool comes to. */
export type ToolAnswer =
  /** The result's structured content. */
  | { readonly value: Record<string, unknown> }
  /**
   * A GET of `get` (and `query`'s members that are set) through the proxy's own pipeline as the
   * agent, so every rule of the HTTP route applies: its body is the result, an error status a tool error.
   */
  | { readonly get: string, readonly query?: Readonly<Record<string, string | undefined>> }

export interface FeatureTool {
  readonly listing: ToolListing
  /**
   * `args` passed `listing.inputSchema` already. A ProxyError thrown is the tool error of its code,
   * shaped as its HTTP answer would be.
   */
  readonly call: (caller: CallerSpec, args: Readonly<Record<string, unknown>>) => Promise<ToolAnswer>
  /** The callers it is listed to; every caller when absent. A call still meets every rule. */
  readonly listedTo?: (caller: CallerSpec) => boolean
}

declare module './feature.js' {
  interface SharedParts {
    /** Offered by every feature that has tools, so, unlike the other members, by more than one. */
    tools: FeatureTool[]
  }
}

export function offerTools (shared: Partial<SharedParts>, tools: readonly FeatureTool[]): void {
  (shared.tools ??= []).push(...tools)
}
