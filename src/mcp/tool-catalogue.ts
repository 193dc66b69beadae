/**
 * The tools an agent can be given (SPEC §13): the proxy's own (`payments_request`, the approval and
 * payment look-ups) and the operator's, and which of them a caller sees. A tool that makes a request
 * is listed only when one of the caller's `allow` rules could permit that request; the look-ups
 * while their feature is on. The listing only saves the agent's context: every call still meets
 * every rule. No tool decides an approval: a person does, over HTTP, the CLI or the console.
 */
import type { Tool } from '@modelcontextprotocol/server'
import type { CallerSpec } from '../callers/callers-file.js'
import { ENVIRONMENT_NAMES, INTERFACE_NAMES, METHODS } from '../callers/callers-schema.js'
import type { EnvironmentName } from '../config/config.js'
import { APPROVAL_STATUSES } from '../approvals/approval-record.js'
import { compileArguments, type ArgumentsCheck } from './argument-validator.js'
import { couldMatch } from './path-template.js'
import type { OperatorTool } from './tools-file.js'

export type ToolAction =
  | { kind: 'request' }
  | { kind: 'operator', tool: OperatorTool }
  | { kind: 'get_approval' | 'list_approvals' | 'get_payment' | 'list_payments' }

/** A tool as `tools/list` shows it. */
export type ToolListing = Tool & { title: string, description: string }

export interface CatalogueTool {
  listing: ToolListing
  check: ArgumentsCheck
  action: ToolAction
}

export interface CatalogueFeatures {
  /** SPEC §11 in use (a caller has approveAbove). */
  approvals: boolean
  /** SPEC §12 on. */
  payments: boolean
}

/** SPEC §12's payment states. */
export const PAYMENT_STATES = ['sending', 'unknown', 'pending', 'succeeded', 'failed', 'stale'] as const

const REFERENCE_RULE = 'For anything that moves money, put a unique externalReference in the body, and when you retry (after a timeout, an error or a restart) send the same externalReference with the same body: the sidecar and the provider then never do it twice. Use a new externalReference only for a new transaction.'

const PAYMENTS_REQUEST: ToolListing = {
  name: 'payments_request',
  title: 'Call the payments API',
  description: 'Sends one request to the payments provider\'s API through this sidecar, which adds the provider\'s credentials and applies your rules: the paths and methods you may use, your rate limit, your amount limits, and a person\'s approval above a threshold. ' +
    'interface is "fiat" (payouts, collections, transaction look-ups) or "crypto" (wallets); path is below that interface\'s base, e.g. "/transactions/abc123"; environment is "sandbox" or "production" (omit it for the deployment\'s default). ' +
    `${REFERENCE_RULE} ` +
    'The result carries the provider\'s status and body. An error result carries the provider\'s error, or the sidecar\'s as {"error": {"code", "message"}}: AMOUNT_LIMIT_EXCEEDED or CALLER_NOT_PERMITTED will not change on a retry. status 202 with an approval means a person decides before anything is sent.',
  inputSchema: {
    type: 'object',
    properties: {
      environment: { enum: [...ENVIRONMENT_NAMES], description: 'sandbox or production; omitted: the deployment\'s default environment' },
      interface: { enum: [...INTERFACE_NAMES], description: 'fiat or crypto' },
      method: { enum: [...METHODS], description: 'the HTTP method' },
      path: { type: 'string', maxLength: 2048, description: 'the path below the interface base, starting with "/", without a query string' },
      query: { type: 'object', additionalProperties: { type: 'string' }, description: 'query string parameters, each a string' },
      body: { description: 'the JSON request body, sent as application/json' },
    },
    required: ['interface', 'method', 'path'],
    additionalProperties: false,
  },
  annotations: { openWorldHint: true },
}

const APPROVAL_LOOKUPS: readonly ToolListing[] = [{
  name: 'get_approval',
  title: 'Look up an approval',
  description: 'Tells whether a person has decided a request of yours that was held for approval (a result with status 202 and an approval). status is pending, approved, rejected or expired; once approved, repeat the original call with the same externalReference and body to get the provider\'s answer. You see your own approvals only. This tool cannot approve or reject anything: a person decides.',
  inputSchema: { type: 'object', properties: { id: { type: 'string', maxLength: 100, description: 'the approval id, apr_...' } }, required: ['id'], additionalProperties: false },
  annotations: { readOnlyHint: true },
}, {
  name: 'list_approvals',
  title: 'List approvals',
  description: 'Lists the approvals of your requests (an approver\'s: every caller\'s), optionally only those with one status. Listing decides nothing: a person approves or rejects.',
  inputSchema: { type: 'object', properties: { status: { enum: [...APPROVAL_STATUSES], description: 'only approvals with this status' } }, additionalProperties: false },
  annotations: { readOnlyHint: true },
}]

const PAYMENT_LOOKUPS: readonly ToolListing[] = [{
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
}, {
  name: 'list_payments',
  title: 'List payments',
  description: 'Lists the payments of your requests, newest first, optionally only those in one state.',
  inputSchema: {
    type: 'object',
    properties: { state: { enum: [...PAYMENT_STATES], description: 'only payments in this state' }, limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'at most this many' } },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true },
}]

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export function buildCatalogue (operatorTools: readonly OperatorTool[], features: CatalogueFeatures): CatalogueTool[] {
  const builtIn = (listing: ToolListing, action: ToolAction): CatalogueTool => {
    const compiled = compileArguments(listing.inputSchema)
    if (!compiled.ok) throw new Error(`${listing.name}: ${compiled.problem}`)
    return { listing, check: compiled.check, action }
  }
  return [
    builtIn(PAYMENTS_REQUEST, { kind: 'request' }),
    ...operatorTools.map((tool): CatalogueTool => ({
      listing: {
        name: tool.name,
        title: tool.title,
        description: tool.description,
        // tools-file.ts admitted only `type: object` schemas.
        inputSchema: tool.input as Tool['inputSchema'],
        annotations: READ_METHODS.has(tool.method) ? { readOnlyHint: true, openWorldHint: true } : { openWorldHint: true },
      },
      check: tool.check,
      action: { kind: 'operator', tool },
    })),
    ...(features.approvals ? APPROVAL_LOOKUPS.map((l) => builtIn(l, { kind: l.name as 'get_approval' | 'list_approvals' })) : []),
    ...(features.payments ? PAYMENT_LOOKUPS.map((l) => builtIn(l, { kind: l.name as 'get_payment' | 'list_payments' })) : []),
  ]
}

/** The tools `caller` is shown. `defaultEnvironment` is where a tool without one goes (SPEC §3's short routes). */
export function toolsFor (caller: CallerSpec, catalogue: readonly CatalogueTool[], defaultEnvironment: EnvironmentName | null): CatalogueTool[] {
  return catalogue.filter(({ action }) => {
    if (action.kind === 'request') return caller.allow.length > 0
    if (action.kind !== 'operator') return true
    const { tool } = action
    const environment = tool.environment ?? defaultEnvironment
    return caller.allow.some((rule) =>
      (environment === null ? rule.environments.size === ENVIRONMENT_NAMES.length : rule.environments.has(environment)) &&
      rule.interfaces.has(tool.interface) &&
      rule.methods.has(tool.method) &&
      (rule.pathGlobs === null || couldMatch(tool.template, rule.pathGlobs)))
  })
}
