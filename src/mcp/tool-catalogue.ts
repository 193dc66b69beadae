/**
 * The tools an agent can be given (SPEC §13): `payments_request`, the operator's, and those the
 * features on offered (feature/feature-tools.ts), and which of them a caller sees. A tool that makes
 * a request is listed only when one of the caller's `allow` rules could permit that request; a
 * feature's to every caller its feature lists it to. The listing only saves the agent's context: every call still meets
 * every rule.
 */
import type { Tool } from '@modelcontextprotocol/server'
import type { CallerSpec } from '../callers/callers-file.js'
import { ENVIRONMENT_NAMES, INTERFACE_NAMES, METHODS } from '../callers/callers-schema.js'
import type { EnvironmentName } from '../config/config.js'
import type { FeatureTool, ToolListing } from '../feature/feature-tools.js'
import { compileArguments, type ArgumentsCheck } from './argument-validator.js'
import { couldMatch } from './path-template.js'
import { BUILT_IN_TOOL_NAMES, type OperatorTool } from './tools-file.js'

export type ToolAction =
  | { kind: 'request' }
  | { kind: 'operator', tool: OperatorTool }
  | { kind: 'feature', call: FeatureTool['call'], listedTo: FeatureTool['listedTo'] }

export interface CatalogueTool {
  listing: ToolListing
  check: ArgumentsCheck
  action: ToolAction
}

const REFERENCE_RULE = 'For anything that moves money, put a unique externalReference in the body, and when you retry (after a timeout, an error or a restart) send the same externalReference with the same body: the sidecar and the provider then never do it twice. Use a new externalReference only for a new transaction.'

const PAYMENTS_REQUEST: ToolListing = {
  name: 'payments_request',
  title: 'Call the payments API',
  description: 'Sends one request to the payments provider\'s API through this sidecar, which adds the provider\'s credentials and applies your rules: the paths and methods you may use, your rate limit, your amount limits, and a person\'s approval above a threshold. ' +
    'interface is "fiat" (payouts, collections, transaction look-ups) or "crypto" (wallets); path is below that interface\'s base, e.g. "/transactions/abc123"; environment is "sandbox" or "production" (omit it for the deployment\'s default). ' +
    `${REFERENCE_RULE} ` +
    'The result carries the provider\'s status and body. An error result carries the provider\'s error, or the sidecar\'s as {"error": {"code", "message"}}: AMOUNT_LIMIT_EXCEEDED or CALLER_NOT_PERMITTED will not change on a retry; PAYMENT_PROBABLE_DUPLICATE names the earlier payment whose externalReference a retry must reuse. status 202 with an approval means a person decides before anything is sent.',
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

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** `featureTools`: what the features on offered, in the features list's order. */
export function buildCatalogue (
  operatorTools: readonly OperatorTool[],
  featureTools: readonly FeatureTool[],
): CatalogueTool[] {
  const builtIn = (listing: ToolListing, action: ToolAction): CatalogueTool => {
    // Reserved whether or not its feature is on, so that no tools file can take it.
    if (!BUILT_IN_TOOL_NAMES.has(listing.name)) throw new Error(`${listing.name}: not among BUILT_IN_TOOL_NAMES (tools-file.ts)`)
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
        annotations: READ_METHODS.has(tool.method)
          ? { readOnlyHint: true, openWorldHint: true }
          : { openWorldHint: true },
      },
      check: tool.check,
      action: { kind: 'operator', tool },
    })),
    ...featureTools.map((tool) => builtIn(tool.listing, { kind: 'feature', call: tool.call, listedTo: tool.listedTo })),
  ]
}

/** The tools `caller` is shown. `defaultEnvironment` is where a tool without one goes (SPEC §3's short routes). */
export function toolsFor (
  caller: CallerSpec,
  catalogue: readonly CatalogueTool[],
  defaultEnvironment: EnvironmentName | null,
): CatalogueTool[] {
  return catalogue.filter(({ action }) => {
    if (action.kind === 'request') return caller.allow.length > 0
    if (action.kind === 'feature') return action.listedTo?.(caller) ?? true
    const { tool } = action
    const environment = tool.environment ?? defaultEnvironment
    return caller.allow.some((rule) =>
      (environment === null
        ? rule.environments.size === ENVIRONMENT_NAMES.length
        : rule.environments.has(environment)) &&
      rule.interfaces.has(tool.interface) &&
      rule.methods.has(tool.method) &&
      (rule.pathGlobs === null || couldMatch(tool.template, rule.pathGlobs)))
  })
}
