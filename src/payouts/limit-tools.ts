/**
 * `get_limits` for agents over MCP (SPEC §16): `GET /limits` as the agent, listed to every caller
 * with amount limits, so an agent reads what it may still spend before a large payout.
 */
import type { FeatureTool } from '../feature/feature-tools.js'

export const LIMIT_TOOLS: readonly FeatureTool[] = [{
  listing: {
    name: 'get_limits',
    title: 'Read your amount limits today',
    description: 'Tells your amount limits and what is left of them today, per currency: perRequest, perDay and approveAbove (null when not set), ' +
      'usedToday (sent and not given back; a payout that failed is given back), heldForApproval (waiting for a person), leftToday and resetsAt ' +
      '(the next UTC midnight, Unix seconds). Read it before a large payout, and plan one that fits: a payout above leftToday is refused, ' +
      'one above approveAbove waits for a person.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true },
  },
  listedTo: (caller) => caller.amountLimits.length > 0,
  async call () {
    return { get: '/limits' }
  },
}]
