/**
 * TypeBox schemas for an operator's file (the callers file, SPEC §7; the MCP tools file, SPEC §13)
 * whose every problem is one line naming its field in the SPEC's form
 * (`callers[1].allow[0].methods[0]: "FETCH" is not an HTTP method`): each schema node may carry the
 * sentence its problems say, and a field is reported once however many rules it breaks.
 */
import { Type, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox'
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value'

/** `message` is what a problem with this value says; `{value}` stands for the value, as JSON. */
export const says = <T extends TSchema>(message: string, schema: T): T => Object.assign(schema, { message })

export const oneOf = (names: readonly string[], what: string): TUnion<Array<TLiteral<string>>> =>
  says(`{value} is not ${what}`, Type.Union(names.map((name) => Type.Literal(name))))

export const list = <T extends TSchema>(item: T): ReturnType<typeof Type.Array<T>> => says('must be a list', Type.Array(item))

export const object = <P extends Parameters<typeof Type.Object>[0]>(properties: P): ReturnType<typeof Type.Object<P>> =>
  says('must be an object', Type.Object(properties, { additionalProperties: false }))

/** Every field's problem, named from `root` (`callers`, `tools`); empty when the document fits. */
export function schemaProblems (schema: TSchema, document: unknown, root: string): string[] {
  if (Value.Check(schema, document)) return []
  const problems: string[] = []
  const seen = new Set<string>()
  for (const error of Value.Errors(schema, document)) {
    // One problem per field: a missing field is also "not a string", a union fails every member.
    if (seen.has(error.path)) continue
    seen.add(error.path)
    problems.push(`${fieldPath(error.path, root)}: ${messageOf(error)}`)
  }
  return problems
}

function messageOf (error: ValueError): string {
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return 'is not a known field'
  if (error.type === ValueErrorType.ObjectRequiredProperty) return 'is required'
  const message = (error.schema as { message?: unknown }).message
  return typeof message === 'string' ? message.replace('{value}', JSON.stringify(error.value) ?? String(error.value)) : error.message
}

/** `/callers/1/allow/0` (a JSON Pointer) as `callers[1].allow[0]`; the document itself as `root`. */
export function fieldPath (pointer: string, root: string): string {
  if (pointer === '') return root
  return pointer.slice(1).split('/').map((raw) => raw.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((out, segment) => /^\d+$/.test(segment) ? `${out}[${segment}]` : out === '' ? segment : `${out}.${segment}`, '')
}
