/**
 * A tool's arguments checked against its JSON Schema (SPEC §13) with Ajv, the validator already in
 * the tree (env-schema and Fastify use it), in the 2020-12 dialect MCP names for `inputSchema`.
 * A refusal names the failing place as `arguments.body.amount`, so the agent can fix that field.
 * `format` is shown to the agent but not checked (no format vocabulary is loaded).
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import { fieldPath } from '../config/schema-problems.js'
import { McpInvalidArgumentsError } from '../errors.js'

// Strict about unknown keywords and types; not about `required` naming a property of the parent (the usual oneOf
// idiom).
const ajv = new Ajv2020({
  allErrors: false,
  strict: true,
  strictRequired: false,
  validateFormats: false,
  allowUnionTypes: true,
})

export type ArgumentsCheck = (args: Record<string, unknown>) => McpInvalidArgumentsError | null

export type Compiled = { ok: true, check: ArgumentsCheck } | { ok: false, problem: string }

/** A schema the operator wrote can be refused: its problem names what Ajv objects to. */
export function compileArguments (schema: Record<string, unknown>): Compiled {
  let validate: ValidateFunction
  try {
    validate = ajv.compile(schema)
  } catch (err) {
    return { ok: false, problem: `is not a valid JSON Schema: ${err instanceof Error ? err.message : String(err)}` }
  }
  return {
    ok: true,
    check: (args) => {
      if (validate(args)) return null
      const [first] = validate.errors ?? []
      return first === undefined ? new McpInvalidArgumentsError('arguments', 'do not fit the tool\'s schema') : refusal(first)
    },
  }
}

function refusal (error: ErrorObject): McpInvalidArgumentsError {
  const at = placeOf(error.instancePath)
  const params = error.params as Record<string, unknown>
  if (error.keyword === 'required') return new McpInvalidArgumentsError(`${at}.${String(params['missingProperty'])}`, 'is required')
  if (error.keyword === 'additionalProperties') return new McpInvalidArgumentsError(`${at}.${String(params['additionalProperty'])}`, at === 'arguments' ? 'is not an argument of this tool' : 'is not a known field')
  return new McpInvalidArgumentsError(at, error.message ?? 'is invalid')
}

/**
 * `/body/payoutMethod/0` as `arguments.body.payoutMethod[0]` (the arguments are an object: the first step is a name).
 */
function placeOf (instancePath: string): string {
  return instancePath === '' ? 'arguments' : `arguments.${fieldPath(instancePath, 'arguments')}`
}
