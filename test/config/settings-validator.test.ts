/**
 * A start reads its settings with the schema compiled ahead of time (settings-validator.generated.ts,
 * written by scripts/generate-settings-validator.mts). That file must be the schema's current
 * compilation, and its reading must equal env-schema's over the same schema, defaults, coercion and
 * errors included. The schema is valid JSON Schema: a start no longer checks that, this test does.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Ajv } from 'ajv'
import envSchemaLoader from 'env-schema'
import { loadConfig, type Env } from '../../src/load-config.js'
import { envSchema } from '../../src/config/schema.js'

const ROOT = new URL('../../', import.meta.url)
const GENERATED = new URL('src/config/settings-validator.generated.js', ROOT)
const base: Env = { PAYMENTS_FIAT_BASE_URL: 'https://api.example.com/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_k', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_k', PROXY_EGRESS_IP_URL: 'off' }
const fullReading = (env: Env): Record<string, unknown> => envSchemaLoader<Record<string, unknown>>({ schema: structuredClone(envSchema), data: { ...env }, env: false })

/** The generator's `--check`, on `file`: its exit status. */
function check (file: string): number {
  try {
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/generate-settings-validator.mts', '--check', '--file', file], { cwd: ROOT, stdio: 'pipe' })
    return 0
  } catch (err) {
    return (err as { status: number }).status
  }
}

t.test('the generated validator is the schema\'s current compilation, and a stale one is found', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'settings-validator-'))
  const copy = join(dir, 'copy.js')
  copyFileSync(GENERATED, copy)
  t.equal(check(copy), 0, 'the committed file is current')
  writeFileSync(copy, readFileSync(copy, 'utf8').replace('"minimum":1', '"minimum":2'))
  t.equal(check(copy), 1, 'a changed compilation is stale')
})

t.test('the settings equal env-schema\'s reading of the schema, defaults and coercion included', async (t) => {
  for (const env of [
    base,
    { ...base, PROXY_PORT: '9090', LOG_LEVEL: 'warn', PROXY_IDEMPOTENCY: 'off' },
    { ...base, PROXY_REDIS_KEY_PREFIX: 'x:', PROXY_TOKEN_TIMEOUT_SECONDS: '7' },
    { ...base, PROXY_APPROVAL_TTL_SECONDS: '120', PROXY_WEBHOOK_CONCURRENCY: '3', PROXY_PAYMENTS_LOOKUPS_PER_SECOND: '9' },
  ]) {
    t.same({ ...loadConfig(env).settings }, fullReading(env), JSON.stringify(env))
  }
})

t.test('an invalid value is reported as env-schema reported it', async (t) => {
  const env = { ...base, PROXY_PORT: 'eighty', LOG_LEVEL: 'loud', PROXY_WEBHOOK_CONCURRENCY: '0' }
  const ours = ((): unknown => { try { return loadConfig(env) } catch (err) { return err } })()
  const theirs = ((): unknown => { try { return fullReading(env) } catch (err) { return err } })()
  t.match(ours, { problems: ['PROXY_PORT must be integer', 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent', 'PROXY_WEBHOOK_CONCURRENCY must be >= 1'] })
  t.match((theirs as { errors: Array<{ instancePath: string }> }).errors.map((e) => e.instancePath).sort(), ['/LOG_LEVEL', '/PROXY_PORT', '/PROXY_WEBHOOK_CONCURRENCY'])
})

t.test('the schema is valid JSON Schema (draft-07), checked here rather than at every start', async (t) => {
  const ajv = new Ajv({ allowUnionTypes: true })
  t.ok(ajv.validateSchema(envSchema), ajv.errorsText())
})
