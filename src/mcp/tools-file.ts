/**
 * The operator's tools (SPEC §13, `PROXY_MCP_TOOLS_FILE`, YAML or JSON): each a documented provider
 * operation with a fixed interface, method and path, whose arguments an agent fills in. The file is
 * read like the callers file and every problem names its field (`tools[1].path: ...`); a file with
 * any problem yields no tools (the start stops, a reload keeps the old ones).
 *
 * Arguments: each `{name}` of the path is a required string argument; `body` is the request body
 * and `query` an object of strings for the query string; the tool's `input` schema says nothing
 * else. Members the schema does not list are refused unless it says otherwise (an agent that
 * misspells a field should hear so, not have it dropped).
 */
import { Type, type Static } from '@sinclair/typebox'
import { ENVIRONMENT_NAMES, INTERFACE_NAMES, METHODS } from '../callers/callers-schema.js'
import { readDocumentFile } from '../config/document-file.js'
import type { EnvironmentName, InterfaceName } from '../config/config.js'
import { list, object, oneOf, says, schemaProblems } from '../config/schema-problems.js'
import type { PathOptions } from '../routing/canonical-path.js'
import { compileArguments, type ArgumentsCheck } from './argument-validator.js'
import { parseTemplate, type PathTemplate } from './path-template.js'

export const MAX_TOOLS_FILE_BYTES = 1024 * 1024
/** MCP tool names (SEP-986): letters, digits, `_`, `-` and `.`. */
const TOOL_NAME = '^[A-Za-z0-9_.-]{1,64}$'
/**
 * Names the proxy's own tools hold, those the features offer too (the catalogue refuses to list one
 * not here), whether or not their feature is on: a tools file means the same with any feature on.
 */
export const BUILT_IN_TOOL_NAMES: ReadonlySet<string> = new Set(['payments_request', 'get_approval', 'list_approvals', 'get_payment', 'list_payments', 'get_limits'])
const ARGUMENT_NAMES_RESERVED = new Set(['body', 'query'])

const ToolSchema = object({
  name: says(`must match ${TOOL_NAME}`, Type.String({ pattern: TOOL_NAME })),
  title: says('must be a non-empty string', Type.String({ minLength: 1, maxLength: 200 })),
  description: says('must be a non-empty string', Type.String({ minLength: 1, maxLength: 8192 })),
  environment: Type.Optional(oneOf(ENVIRONMENT_NAMES, 'an environment (sandbox, production)')),
  interface: oneOf(INTERFACE_NAMES, 'an interface (fiat, crypto)'),
  method: oneOf(METHODS, 'an HTTP method'),
  path: says('must be a path starting with "/"', Type.String({ pattern: '^/' })),
  input: says('must be a JSON Schema object', Type.Record(Type.String(), Type.Unknown())),
})
const ToolsFileSchema = says('must be an object with a list of tools', Type.Object({ tools: list(ToolSchema) }, { additionalProperties: false }))
type ToolEntry = Static<typeof ToolSchema>

export interface OperatorTool {
  name: string
  title: string
  description: string
  /** Null: the default environment's short route (`/fiat/...`), as `payments_request` without one. */
  environment: EnvironmentName | null
  interface: InterfaceName
  method: string
  template: PathTemplate
  /** The schema as written: what the agent is shown. */
  input: Readonly<Record<string, unknown>>
  check: ArgumentsCheck
}

export type ToolsLoad = { ok: true, tools: OperatorTool[] } | { ok: false, problems: string[] }

export function readToolsFile (file: string, paths: PathOptions): ToolsLoad {
  const read = readDocumentFile(file, 'PROXY_MCP_TOOLS_FILE', MAX_TOOLS_FILE_BYTES)
  if (!read.ok) return read
  const load = validateTools(read.document, paths)
  return load.ok ? load : { ok: false, problems: load.problems.map((p) => `${file}: ${p}`) }
}

export function validateTools (document: unknown, paths: PathOptions): ToolsLoad {
  const shape = schemaProblems(ToolsFileSchema, document, 'tools')
  if (shape.length > 0) return { ok: false, problems: shape }
  const problems: string[] = []
  const names = new Set<string>()
  const tools: OperatorTool[] = []
  for (const [index, entry] of (document as Static<typeof ToolsFileSchema>).tools.entries()) {
    const at = `tools[${index}]`
    if (BUILT_IN_TOOL_NAMES.has(entry.name)) problems.push(`${at}.name: "${entry.name}" is a tool of the proxy's own`)
    else if (names.has(entry.name)) problems.push(`${at}.name: "${entry.name}" is not unique`)
    names.add(entry.name)
    const tool = operatorTool(entry, at, paths, problems)
    if (tool !== null) tools.push(tool)
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, tools }
}

function operatorTool (entry: ToolEntry, at: string, paths: PathOptions, problems: string[]): OperatorTool | null {
  const read = parseTemplate(entry.path, paths)
  if (!read.ok) problems.push(`${at}.path: ${read.problem}`)
  const before = problems.length
  const input = entry.input
  if (input['type'] !== 'object') problems.push(`${at}.input.type: must be "object" (the arguments are an object)`)
  const properties = isRecord(input['properties']) ? input['properties'] : {}
  const required = Array.isArray(input['required']) ? input['required'] : []
  for (const name of read.ok ? read.template.placeholders : []) {
    if (ARGUMENT_NAMES_RESERVED.has(name)) problems.push(`${at}.path: {${name}} is reserved (body is the request body, query the query string)`)
    else if (!(name in properties) || !required.includes(name)) problems.push(`${at}.input: the placeholder {${name}} must be a property and required`)
  }
  for (const name of Object.keys(properties)) {
    if (!ARGUMENT_NAMES_RESERVED.has(name) && !(read.ok && read.template.placeholders.includes(name))) {
      problems.push(`${at}.input.properties.${name}: is neither a placeholder of the path, body nor query`)
    }
  }
  // Unknown members are refused unless the schema says otherwise.
  const shown = 'additionalProperties' in input ? input : { ...input, additionalProperties: false }
  const compiled = compileArguments(shown)
  if (!compiled.ok) problems.push(`${at}.input: ${compiled.problem}`)
  if (!read.ok || !compiled.ok || problems.length > before) return null
  return {
    name: entry.name,
    title: entry.title,
    description: entry.description,
    // The schema admitted only these names.
    environment: (entry.environment ?? null) as EnvironmentName | null,
    interface: entry.interface as InterfaceName,
    method: entry.method,
    template: read.template,
    input: shown,
    check: compiled.check,
  }
}

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
