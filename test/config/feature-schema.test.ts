/**
 * Without any inbox or approvals variable, the settings are read with the core schema and the
 * features' defaults (schema.ts: Ajv compiles only what a start needs). That reading must equal the
 * full schema's, for any environment: here the full schema is run directly through env-schema (the
 * reading settings-reader.ts keeps, without env-schema's cost at a start) and compared with
 * loadConfig's settings, and a feature variable switches to the full schema. The schemas are valid
 * JSON Schema: a start no longer checks that, this test does.
 */
import t from 'tap'
import { Ajv } from 'ajv'
import envSchemaLoader from 'env-schema'
import { loadConfig, type Env } from '../../src/config/load-config.js'
import { CORE_SCHEMA, envSchema, FEATURE_DEFAULTS, FEATURE_PREFIXES } from '../../src/config/schema.js'

const base: Env = { PAYMENTS_FIAT_BASE_URL: 'https://api.example.com/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_k', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_k', PROXY_EGRESS_IP_URL: 'off' }
const fullReading = (env: Env): Record<string, unknown> => envSchemaLoader<Record<string, unknown>>({ schema: structuredClone(envSchema), data: { ...env }, env: false })

t.test('without feature variables the settings equal the full schema\'s reading, defaults included', async (t) => {
  for (const env of [base, { ...base, PROXY_PORT: '9090', LOG_LEVEL: 'warn', PROXY_IDEMPOTENCY: 'off' }, { ...base, PROXY_REDIS_KEY_PREFIX: 'x:', PROXY_TOKEN_TIMEOUT_SECONDS: '7' }]) {
    t.same({ ...loadConfig(env).settings }, fullReading(env), JSON.stringify(env))
  }
})

t.test('every feature default is the full schema\'s, and every feature variable has one of the prefixes', async (t) => {
  const defaults = fullReading(base)
  for (const [name, value] of Object.entries(FEATURE_DEFAULTS)) t.equal(value, defaults[name], name)
  const featureNames = Object.keys(envSchema.properties).filter((name) => FEATURE_PREFIXES.some((prefix) => name.startsWith(prefix)))
  t.ok(featureNames.length >= 30, `${featureNames.length} feature variables`)
  t.same(Object.keys(FEATURE_DEFAULTS).filter((name) => !featureNames.includes(name)), [], 'no default outside the features')
})

t.test('one feature variable, even invalid, is read by the full schema', async (t) => {
  const env = { ...base, PROXY_APPROVAL_TTL_SECONDS: '120' }
  t.same({ ...loadConfig(env).settings }, fullReading(env))
  t.throws(() => loadConfig({ ...base, PROXY_WEBHOOK_CONCURRENCY: '0' }), /PROXY_WEBHOOK_CONCURRENCY/)
})

t.test('the schemas are valid JSON Schema (draft-07), checked here rather than at every start', async (t) => {
  const ajv = new Ajv({ allowUnionTypes: true })
  t.ok(ajv.validateSchema(envSchema), ajv.errorsText())
  t.ok(ajv.validateSchema(CORE_SCHEMA), ajv.errorsText())
})

t.test('an invalid value is reported as env-schema reported it', async (t) => {
  const env = { ...base, PROXY_PORT: 'eighty', LOG_LEVEL: 'loud' }
  const ours = ((): unknown => { try { return loadConfig(env) } catch (err) { return err } })()
  const theirs = ((): unknown => { try { return fullReading(env) } catch (err) { return err } })()
  t.match(ours, { problems: ['PROXY_PORT must be integer', 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent'] })
  t.match((theirs as { errors: Array<{ instancePath: string }> }).errors.map((e) => e.instancePath).sort(), ['/LOG_LEVEL', '/PROXY_PORT'])
})
