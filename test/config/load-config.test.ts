import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError } from '../../src/config/config-error.js'
import { loadConfig, type Env } from '../../src/load-config.js'
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_PORT, DEFAULT_REFRESH_MARGIN_S, KNOWN_VARIABLES, SECRET_VARIABLES } from '../../src/config/schema.js'
import { problemsOf } from '../helpers/config-problems.js'

const SECRET = 'HC_marker_api_key_Zq81'
const PUBLIC = 'pk_marker_public_Zq81'
const base: Env = {
  PAYMENTS_FIAT_BASE_URL: 'https://fiat.example.com/api/b2b',
  PAYMENTS_CRYPTO_BASE_URL: 'https://crypto.example.com/api',
  PAYMENTS_SANDBOX_API_KEY: SECRET,
  PAYMENTS_SANDBOX_PUBLIC_KEY: PUBLIC,
}

t.test('defaults, derived sandbox URLs and the single environment as default', async (t) => {
  const { config, warnings } = loadConfig(base)
  t.equal(config.listen.host, '127.0.0.1')
  t.equal(config.listen.port, DEFAULT_PORT)
  t.equal(config.token.refreshMarginS, DEFAULT_REFRESH_MARGIN_S)
  t.equal(config.bodyLimitBytes, DEFAULT_BODY_LIMIT_BYTES)
  t.same(config.baseUrls.sandbox, { fiat: 'https://fiat.example.com/api/sandbox/b2b', crypto: 'https://crypto.example.com/api/sandbox' })
  t.equal(config.environments.sandbox?.tokenUrl, 'https://fiat.example.com/api/sandbox/b2b/auth/generate-bearer-token')
  t.equal(config.environments.production, undefined, 'production without keys is not enabled')
  t.equal(config.defaultEnvironment, 'sandbox')
  t.same(warnings, [])
  t.ok(Object.isFrozen(config.environments.sandbox?.credentials), 'config is frozen')
})

t.test('explicit sandbox URLs win over derivation; trailing slashes are dropped', async (t) => {
  const { config } = loadConfig({ ...base, PAYMENTS_FIAT_SANDBOX_BASE_URL: 'https://sandbox.example.com/api/sandbox/b2b/' })
  t.equal(config.baseUrls.sandbox.fiat, 'https://sandbox.example.com/api/sandbox/b2b')
})

t.test('every problem is reported at once, naming the variable, never a secret value', async (t) => {
  const problems = problemsOf({
    PAYMENTS_FIAT_BASE_URL: 'ftp://nope',
    PAYMENTS_PRODUCTION_API_KEY: SECRET,
    PROXY_PORT: '70000',
    PROXY_DEFAULT_ENVIRONMENT: 'staging',
    PROXY_ALLOWED_CLIENTS: '10.0.0.0/33',
  })
  const text = problems.join('\n')
  t.match(text, /PROXY_PORT/)
  t.match(text, /PROXY_DEFAULT_ENVIRONMENT must be one of production, sandbox/)
  t.ok(problems.length >= 2, `several problems reported together: ${text}`)
  t.notMatch(text, SECRET)
  const second = problemsOf({ ...base, PAYMENTS_FIAT_BASE_URL: 'ftp://nope', PAYMENTS_PRODUCTION_API_KEY: SECRET, PROXY_ALLOWED_CLIENTS: '10.0.0.0/33' })
  t.match(second.join('\n'), /PAYMENTS_FIAT_BASE_URL must use https/)
  t.match(second.join('\n'), /PAYMENTS_PRODUCTION_PUBLIC_KEY is missing/)
  t.match(second.join('\n'), /PROXY_ALLOWED_CLIENTS: "10.0.0.0\/33" is not a CIDR/)
  t.notMatch(second.join('\n'), SECRET)
})

t.test('a missing fiat base URL and no credentials are both named', async (t) => {
  const problems = problemsOf({})
  t.match(problems.join('\n'), /PAYMENTS_FIAT_BASE_URL is required/)
})

t.test('a sandbox-only deployment may name only its sandbox base URLs; production still needs PAYMENTS_FIAT_BASE_URL', async (t) => {
  const sandboxOnly: Env = {
    PAYMENTS_FIAT_SANDBOX_BASE_URL: 'https://fiat.example.com/api/sandbox/b2b',
    PAYMENTS_CRYPTO_SANDBOX_BASE_URL: 'https://crypto.example.com/api/sandbox',
    PAYMENTS_SANDBOX_API_KEY: SECRET,
    PAYMENTS_SANDBOX_PUBLIC_KEY: PUBLIC,
  }
  const { config } = loadConfig(sandboxOnly)
  t.same(config.environments.sandbox?.baseUrls, { fiat: 'https://fiat.example.com/api/sandbox/b2b', crypto: 'https://crypto.example.com/api/sandbox' })
  t.equal(config.environments.sandbox?.tokenUrl, 'https://fiat.example.com/api/sandbox/b2b/auth/generate-bearer-token')
  t.equal(config.environments.production, undefined)
  t.match(problemsOf({ ...sandboxOnly, PAYMENTS_PRODUCTION_API_KEY: SECRET, PAYMENTS_PRODUCTION_PUBLIC_KEY: PUBLIC }).join('\n'), /PAYMENTS_FIAT_BASE_URL is required/)
})

t.test('no environment configured is a problem', async (t) => {
  t.match(problemsOf({ PAYMENTS_FIAT_BASE_URL: 'https://fiat.example.com/api/b2b' }).join('\n'), /no environment configured/)
})

t.test('_FILE secrets are read, trailing newline removed; both forms at once is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pap-config-'))
  const file = join(dir, 'api-key')
  writeFileSync(file, `${SECRET}\n`)
  const { config, secretFiles } = { ...loadConfig({ ...base, PAYMENTS_SANDBOX_API_KEY: undefined, PAYMENTS_SANDBOX_API_KEY_FILE: file }), secretFiles: [file] }
  t.equal(config.environments.sandbox?.credentials.apiKey, SECRET)
  t.same(config.secretFiles, secretFiles)
  t.match(problemsOf({ ...base, PAYMENTS_SANDBOX_API_KEY_FILE: file }).join('\n'), /PAYMENTS_SANDBOX_API_KEY and PAYMENTS_SANDBOX_API_KEY_FILE are both set/)
  const missing = problemsOf({ ...base, PAYMENTS_SANDBOX_API_KEY: undefined, PAYMENTS_SANDBOX_API_KEY_FILE: join(dir, 'nope') })
  t.match(missing, [/^PAYMENTS_SANDBOX_API_KEY_FILE: cannot read .*nope \(ENOENT\)$/], 'one line for the one problem, not also "is missing"')
  t.equal(missing.length, 1)
})

t.test('a secret with a line break is refused without echoing it', async (t) => {
  const problems = problemsOf({ ...base, PAYMENTS_SANDBOX_API_KEY: `${SECRET}\r\nx-evil: 1` })
  t.match(problems, [/^PAYMENTS_SANDBOX_API_KEY: must be printable ASCII/], 'one line for the one problem, not also "is missing"')
  t.equal(problems.length, 1)
  t.notMatch(problems.join('\n'), SECRET)
})

t.test('.env is read under the variables, which win', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pap-dotenv-'))
  const file = join(dir, '.env')
  writeFileSync(file, `PAYMENTS_FIAT_BASE_URL=https://fiat.example.com/api/b2b\nPAYMENTS_SANDBOX_API_KEY=${SECRET}\nPAYMENTS_SANDBOX_PUBLIC_KEY=${PUBLIC}\nPROXY_PORT=9000\n`)
  const { config } = loadConfig({ PROXY_PORT: '9100' }, { dotenvPath: file })
  t.equal(config.environments.sandbox?.credentials.apiKey, SECRET)
  t.equal(config.listen.port, 9100)
})

function dotenvFile (content: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'pap-dotenv-')), '.env')
  writeFileSync(file, content)
  return file
}

function problemsWithDotenv (env: Env, content: string): readonly string[] {
  return problemsOf(env, { dotenvPath: dotenvFile(content) })
}

const baseDotenv = Object.entries(base).map(([k, v]) => `${k}=${v ?? ''}\n`).join('')

t.test('a bad value in .env is reported exactly like the same value in the environment', async (t) => {
  const fromDotenv = problemsWithDotenv({}, `${baseDotenv}PROXY_PORT=abc\n`)
  t.same(fromDotenv, ['PROXY_PORT must be integer'])
  t.same(fromDotenv, problemsOf({ ...base, PROXY_PORT: 'abc' }))
})

t.test('an unknown PROXY_ name in .env is refused as in the environment', async (t) => {
  const fromDotenv = problemsWithDotenv({}, `${baseDotenv}PROXY_TOKEN_REFRESH_MARGIN=10\n`)
  t.match(fromDotenv, [/^PROXY_TOKEN_REFRESH_MARGIN is not a known setting: did you mean PROXY_TOKEN_REFRESH_MARGIN_SECONDS\?/])
  t.same(fromDotenv, problemsOf({ ...base, PROXY_TOKEN_REFRESH_MARGIN: '10' }))
})

t.test('an empty line in .env means unset, as an empty variable does', async (t) => {
  t.same(problemsWithDotenv({}, `${baseDotenv}PROXY_DEFAULT_ENVIRONMENT=\nPROXY_PORT=\n`), [])
  const { config } = loadConfig({}, { dotenvPath: dotenvFile(`${baseDotenv}PROXY_DEFAULT_ENVIRONMENT=\n`) })
  t.equal(config.defaultEnvironment, 'sandbox')
})

// Issue 43 item 17: `PROXY_CALLERS_FILE=` in the environment left .env's callers file in force.
t.test('a variable set empty in the environment wins over .env and means unset, for every variable', async (t) => {
  const names = new Set([...KNOWN_VARIABLES, ...SECRET_VARIABLES.map((name) => `${name}_FILE`)])
  t.ok(names.size >= 70, `${names.size} variables`)
  for (const name of names) {
    const env = { ...base, [name]: '' }
    // Whatever .env says of it (a value that is a problem, or one that changes the settings) must not count.
    const outcome = (options?: { dotenvPath: string }): unknown => {
      try {
        return loadConfig(env, options).settings
      } catch (err) {
        if (err instanceof ConfigError) return err.problems
        throw err
      }
    }
    t.same(outcome({ dotenvPath: dotenvFile(`${name}=9\n`) }), outcome(), name)
  }
  const callers = dotenvFile(`${baseDotenv}PROXY_CALLERS_FILE=/etc/payments-auth-proxy/callers.yaml\n`)
  t.equal(loadConfig({ PROXY_CALLERS_FILE: '' }, { dotenvPath: callers }).config.callers.file, null, 'PROXY_CALLERS_FILE= turns the file\'s callers off')
})

t.test('bad values in both .env and the environment: each reported once, the variable winning over .env', async (t) => {
  t.same(problemsWithDotenv({ PROXY_PORT: 'xyz' }, `${baseDotenv}PROXY_PORT=abc\n`), ['PROXY_PORT must be integer'])
  const both = problemsWithDotenv({ PROXY_DEFAULT_ENVIRONMENT: 'staging' }, `${baseDotenv}PROXY_PORT=abc\n`)
  t.same([...both].sort(), ['PROXY_DEFAULT_ENVIRONMENT must be one of production, sandbox', 'PROXY_PORT must be integer'])
  t.same(problemsWithDotenv({ PROXY_PORT: '9100' }, `${baseDotenv}PROXY_PORT=abc\n`), [], 'a valid variable hides the bad .env value')
})

t.test('several problems in .env are reported together with the checks that follow the schema', async (t) => {
  const problems = problemsWithDotenv({}, [
    'PAYMENTS_FIAT_BASE_URL=ftp://nope',
    `PAYMENTS_PRODUCTION_API_KEY=${SECRET}`,
    'PROXY_PORT=abc',
    'LOG_LEVEL=loud',
    'PROXY_TOKEN_TIMEOUT_SECONDS=0',
    'PROXY_ALLOWED_CLIENTS=10.0.0.0/33',
  ].join('\n'))
  const text = problems.join('\n')
  t.match(text, /PROXY_PORT must be integer/)
  t.match(text, /LOG_LEVEL must be one of fatal/)
  t.match(text, /PROXY_TOKEN_TIMEOUT_SECONDS must be >= 1/)
  t.match(text, /PAYMENTS_FIAT_BASE_URL must use https/)
  t.match(text, /PAYMENTS_PRODUCTION_PUBLIC_KEY is missing/)
  t.match(text, /PROXY_ALLOWED_CLIENTS: "10.0.0.0\/33" is not a CIDR/)
  t.equal(problems.length, 6, text)
})

t.test('a secret pasted into the wrong variable of .env is never printed', async (t) => {
  let error: unknown
  try {
    loadConfig({}, { dotenvPath: dotenvFile(`${baseDotenv}PROXY_PORT=${SECRET}\nPROXY_DEFAULT_ENVIRONMENT=${PUBLIC}\nPROXY_HOST=${SECRET}\n`) })
  } catch (err) {
    error = err
  }
  t.type(error, ConfigError)
  const text = `${(error as Error).message}\n${(error as Error).stack ?? ''}\n${JSON.stringify(error)}`
  t.match(text, /PROXY_PORT must be integer/)
  t.match(text, /PROXY_DEFAULT_ENVIRONMENT must be one of/)
  t.match(text, /PROXY_HOST must be an IP address/)
  t.notMatch(text, SECRET)
  t.notMatch(text, PUBLIC)
})

t.test('an unreadable .env is a problem naming the file, not a crash', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pap-dotenv-'))
  let error: unknown
  try {
    loadConfig(base, { dotenvPath: dir })
  } catch (err) {
    error = err
  }
  t.type(error, ConfigError)
  t.same((error as ConfigError).problems, [`${dir}: cannot read (EISDIR)`])
})

t.test('an unexpected failure while loading is a ConfigError that does not repeat its message', async (t) => {
  const env: Record<string, string> = { ...base } as Record<string, string>
  Object.defineProperty(env, 'PROXY_PORT', { enumerable: true, get () { throw new TypeError(`bad value ${SECRET}`) } })
  let error: unknown
  try {
    loadConfig(env)
  } catch (err) {
    error = err
  }
  t.type(error, ConfigError)
  t.same((error as ConfigError).problems, ['configuration could not be read: unexpected TypeError'])
  t.notMatch(`${(error as Error).message}${(error as Error).stack ?? ''}`, SECRET)
})

t.test('warnings: unknown PROXY_ names when allowed, API key prefix, both environments without a default, wide bind', async (t) => {
  const { warnings, config } = loadConfig({
    ...base,
    PAYMENTS_PRODUCTION_API_KEY: 'no_prefix_key',
    PAYMENTS_PRODUCTION_PUBLIC_KEY: PUBLIC,
    PROXY_TOKEN_REFRESH_MARGIN: '10',
    PROXY_ALLOW_UNKNOWN_VARIABLES: 'true',
    PROXY_HOST: '0.0.0.0',
  })
  const text = warnings.join('\n')
  t.match(text, /PROXY_TOKEN_REFRESH_MARGIN is not a known setting: did you mean PROXY_TOKEN_REFRESH_MARGIN_SECONDS\? \(ignored: PROXY_ALLOW_UNKNOWN_VARIABLES=true\)/)
  t.match(text, /PAYMENTS_PRODUCTION_API_KEY does not start with the provider's prefix HC_/)
  t.match(text, /PROXY_DEFAULT_ENVIRONMENT is not set/)
  t.match(text, /PROXY_ALLOWED_CLIENTS allows loopback only/)
  t.equal(config.defaultEnvironment, null)
  t.notMatch(text, 'no_prefix_key')
})

t.test('a default environment without credentials is refused', async (t) => {
  t.match(problemsOf({ ...base, PROXY_DEFAULT_ENVIRONMENT: 'production' }).join('\n'), /PROXY_DEFAULT_ENVIRONMENT: production has no credentials/)
})

t.test('sandbox URL that cannot be derived must be given', async (t) => {
  t.match(problemsOf({ ...base, PAYMENTS_FIAT_BASE_URL: 'https://fiat.example.com/v2' }).join('\n'), /PAYMENTS_FIAT_SANDBOX_BASE_URL is required/)
})

t.test('egress URL off, expected egress IPs parsed', async (t) => {
  const { config } = loadConfig({ ...base, PROXY_EGRESS_IP_URL: 'off', PROXY_EXPECTED_EGRESS_IPS: '203.0.113.7, 198.51.100.2' })
  t.equal(config.egress.url, null)
  t.same(config.egress.expectedIps, ['203.0.113.7', '198.51.100.2'])
  t.match(problemsOf({ ...base, PROXY_EXPECTED_EGRESS_IPS: 'not-an-ip' }).join('\n'), /PROXY_EXPECTED_EGRESS_IPS: "not-an-ip" is not an IP address/)
})

t.test('a retry minimum over half the refresh margin is a warning: the token may lapse between attempts', async (t) => {
  const { warnings } = loadConfig({ ...base, PROXY_TOKEN_REFRESH_MARGIN_SECONDS: '60', PROXY_TOKEN_RETRY_MIN_SECONDS: '40' })
  t.match(warnings, [/PROXY_TOKEN_RETRY_MIN_SECONDS is over half of PROXY_TOKEN_REFRESH_MARGIN_SECONDS/])
  t.same(loadConfig(base).warnings.filter((w) => w.includes('RETRY_MIN')), [], 'not with the defaults')
})

t.test('the idempotency reference pointer must be an RFC 6901 pointer to a member, or idempotency would silently never apply', async (t) => {
  for (const pointer of ['externalReference', 'ref/x', '/a~2b', '/a~']) {
    t.match(problemsOf({ ...base, PROXY_IDEMPOTENCY_KEY_POINTER: pointer }).join('\n'), /PROXY_IDEMPOTENCY_KEY_POINTER must be a JSON Pointer \(RFC 6901\)/, `"${pointer}" refused`)
  }
  for (const pointer of ['/externalReference', '/meta/ref', '/a~1b/~0c', '/items/0/ref']) {
    t.equal(loadConfig({ ...base, PROXY_IDEMPOTENCY_KEY_POINTER: pointer }).config.idempotency.keyPointer, pointer, `"${pointer}" accepted`)
  }
  t.equal(loadConfig({ ...base, PROXY_IDEMPOTENCY_KEY_POINTER: '' }).config.idempotency.keyPointer, '/externalReference', 'empty means unset: the default')
})
