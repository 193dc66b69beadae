/**
 * Reads variables through the configuration's JSON Schema as env-schema does: the same Ajv options
 * (every error reported, unknown names removed, defaults applied, strings coerced to the schema's
 * types), the same error (its text over `env`, Ajv's errors in `errors`). Not env-schema itself:
 * env-schema builds an Ajv instance when it is imported and compiles the schema at its first use,
 * the largest cost of a start beyond Fastify's (docs/performance-startup.md). The schema is compiled
 * once, at development time, into settings-validator.generated.js (by
 * scripts/generate-settings-validator.mts); test/config/settings-validator.test.ts fails when that
 * file is stale and compares this reading with env-schema's.
 */
import type { ErrorObject } from 'ajv'
import { validateSettings } from './settings-validator.generated.js'

/** Ajv's `errorsText` with `dataVar: 'env'`, without an Ajv instance. */
function errorsText (errors: readonly ErrorObject[]): string {
  return errors.map((e) => `env${e.instancePath} ${e.message ?? ''}`).join(', ')
}

/** `data` is not changed; the reading is a copy, with the schema's defaults and types. Throws on an invalid value. */
export function readSettingsVariables<T> (data: Readonly<Record<string, unknown>>): T {
  const reading: Record<string, unknown> = { ...data }
  if (!validateSettings(reading)) {
    const errors = validateSettings.errors ?? []
    const error = new Error(errorsText(errors)) as Error & { errors: unknown }
    error.errors = errors
    throw error
  }
  return reading as T
}
