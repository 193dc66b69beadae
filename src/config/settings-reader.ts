/**
 * Reads variables through the configuration's JSON Schema as env-schema does: the same Ajv options
 * (every error reported, unknown names removed, defaults applied, strings coerced to the schema's
 * types), the same error (its text over `env`, Ajv's errors in `errors`). Not env-schema itself:
 * env-schema builds an Ajv instance as soon as it is imported, whose `separator` keyword carries a
 * meta-schema, so every start compiled the draft-07 meta-schema first, the largest single cost of
 * a start beyond Fastify's (docs/performance-startup.md). Here one Ajv instance is built at the
 * first reading, and each schema (a constant of schema.ts) compiled once; being a constant, it is
 * checked against the meta-schema by a test, not at every start (test/config/feature-schema.test.ts,
 * which also compares this reading with env-schema's).
 */
import { Ajv, type ValidateFunction } from 'ajv'

let ajv: Ajv | null = null
const compiled = new WeakMap<object, ValidateFunction>()

/** `data` is not changed; the reading is a copy, with the schema's defaults and types. Throws on an invalid value. */
export function readBySchema<T> (schema: object, data: Readonly<Record<string, unknown>>): T {
  ajv ??= new Ajv({ allErrors: true, removeAdditional: true, useDefaults: true, coerceTypes: true, allowUnionTypes: true, addUsedSchema: false, validateSchema: false })
  let validate = compiled.get(schema)
  if (validate === undefined) {
    validate = ajv.compile({ ...schema, additionalProperties: false })
    compiled.set(schema, validate)
  }
  const reading: Record<string, unknown> = { ...data }
  if (!validate(reading)) {
    const error = new Error(ajv.errorsText(validate.errors, { dataVar: 'env' })) as Error & { errors: unknown }
    error.errors = validate.errors
    throw error
  }
  return reading as T
}
