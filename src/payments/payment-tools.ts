/**
 * Payments' tools for agents over MCP (SPEC §13): `get_payment` and `list_payments`, each a request
 * to §12's routes as the agent, so a look-up meets the visibility and the rules an HTTP one meets.
 */
import { ENVIRONMENT_NAMES } from '../callers/callers-schema.js'
import type { FeatureTool } from '../feature/feature-tools.js'

/**
 * The states an agent may list by: those of §12's machine. `unverified` is how a record that failed
 * its seals is read, not a state a payment moves to, and the listing agents were given never had it.
 */
const LISTED_STATES = ['sending', 'unknown', 'pending', 'succeeded', 'failed', 'stale'] as const

export const PAYMENT_TOOLS: readonly FeatureTool[] = [{
  listing: {
    name: 'get_payment',
    title: 'Look up a payment',
    description: 'Tells the state of a payment this sidecar follows to its final state (sending, unknown, pending, succeeded, failed, stale), by your externalReference or by its id (pay_...). Only succeeded is final and successful: do not treat a pending payment as paid.',
    inputSchema: {
      type: 'object',
      properties: {
        reference: { type: 'string', minLength: 1, maxLength: 256, description: 'the externalReference you sent' },
        id: { type: 'string', minLength: 1, maxLength: 100, description: 'the payment id, pay_...' },
        environment: { enum: [...ENVIRONMENT_NAMES], description: 'only a payment of this environment' },
      },
      oneOf: [{ required: ['reference'] }, { required: ['id'] }],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  async call (_caller, args) {
    const environment = args['environment']
    return { get: `/payments/${encodeURIComponent(String(args['reference'] ?? args['id']))}`, query: { environment: typeof environment === 'string' ? environment : undefined } }
  },
}, {
  listing: {
    name: 'list_payments',
    title: 'List payments',
    description: 'Lists the payments of your requests, newest first, optionally only those in one state.',
    inputSchema: {
      type: 'object',
      properties: { state: { enum: [...LISTED_STATES], description: 'only payments in this state' }, limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'at most this many' } },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  async call (_caller, args) {
    const { state, limit } = args
    return { get: '/payments', query: { state: typeof state === 'string' ? state : undefined, limit: typeof limit === 'number' ? String(limit) : undefined } }
  },
}]
