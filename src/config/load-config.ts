/**
 * Builds the typed Config from a plain variables object (process.env plus `.env` in the CLI, a
 * literal object in tests). Every problem is collected and reported at once, each naming the
 * variable and the rule; values are never echoed because some of them are secrets.
 */
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { parseEnv } from 'node:util'
import { checkBaseUrl, deriveSandboxBaseUrl, isPlainHttpToRemote } from './base-urls.js'
import { ENVIRONMENTS, TOKEN_PATH, type Config, type EnvironmentConfig, type EnvironmentName, type InterfaceName } from './config.js'
import { isHostName, parseCidr, splitList, type Cidr } from './network-lists.js'
import { KNOWN_VARIABLES, SECRET_VARIABLES, type RawSettings } from './schema.js'
import { resolveRedisUrl } from './redis-url.js'
import { readSettingsVariables } from './settings-reader.js'
import { describeUnknown, findUnknownVariables } from './unknown-variables.js'
import { readSecrets, type SecretsResult } from './secrets.js'
import { resolveApprovals } from './approval-settings.js'
import { resolveConsole } from './console-settings.js'
import { sameSecretProblems } from './distinct-secrets.js'
import { resolveSealingSecret } from './sealing-secret.js'
import { resolvePayments } from './payment-settings.js'
import { resolveWebhooks } from './webhook-settings.js'
import { JSON_POINTER_PATTERN } from '../json/strict-json.js'

/** The provider's API keys carry this vendor prefix (SPEC §1); another prefix is suspicious, not fatal. */
export const API_KEY_PREFIX = 'HC_'

export type Env = Readonly<Record<string, string | undefined>>

export class ConfigError extends Error {
  readonly problems: readonly string[]
  constructor (problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
    this.problems = problems
  }
}

export interface LoadedConfig {
  config: Config
  warnings: string[]
  /** The variables as the schema read them (defaults applied): what a reload compares, never logged. */
  settings: Readonly<RawSettings>
}

export interface LoadOptions {
  /** Path of a dotenv file read under the variables (variables win); absent means none. */
  dotenvPath?: string
}

/** Throws only ConfigError, whose problems never quote a value: callers print them as they are. */
export function loadConfig (env: Env, options: LoadOptions = {}): LoadedConfig {
  try {
    return buildConfig(env, options)
  } catch (err) {
    if (err instanceof ConfigError) throw err
    // Any other error's message may quote a value, and values can be secrets: name its kind only.
    throw new ConfigError([`configuration could not be read: unexpected ${errorKind(err)}`])
  }
}

/** The steps, in order; each reports its problems and warnings, and only a clean run builds a Config. */
function buildConfig (env: Env, options: LoadOptions): LoadedConfig {
  const problems: string[] = []
  const warnings: string[] = []
  const { variables, settings, invalid } = readSettings(env, options, problems)
  reportUnknownVariables(variables, settings, problems, warnings)
  const secrets = readSecrets(settings)
  problems.push(...secrets.problems)
  requireFiatBase(settings, secrets, invalid, problems)
  const baseUrls = resolveBaseUrls(settings, problems, warnings)
  const environments = resolveEnvironments(secrets, baseUrls, problems, warnings)
  const enabled = ENVIRONMENTS.filter((e) => environments[e] !== undefined)
  // Only when no key was given at all: keys held back by a bad base URL already have that URL's line.
  if (Object.keys(secrets.values).length === 0 && secrets.problems.length === 0) {
    problems.push('no environment configured: set PAYMENTS_PRODUCTION_API_KEY and PAYMENTS_PRODUCTION_PUBLIC_KEY, or the PAYMENTS_SANDBOX_ pair (or their _FILE variants)')
  }
  const defaultEnvironment = resolveDefaultEnvironment(settings, enabled, problems, warnings)
  const access = {
    allowedClients: parseList(settings.PROXY_ALLOWED_CLIENTS, 'PROXY_ALLOWED_CLIENTS', parseCidr, 'a CIDR such as 10.0.0.0/8 or an IP address', problems),
    allowedHosts: parseList(settings.PROXY_ALLOWED_HOSTS, 'PROXY_ALLOWED_HOSTS', (s) => isHostName(s) ? s.toLowerCase() : null, 'a host name without port', problems),
  }
  const egress = resolveEgress(settings, problems)
  checkTokenTiming(settings, problems, warnings)
  checkListenHost(settings.PROXY_HOST, problems)
  checkReferencePointer(settings.PROXY_IDEMPOTENCY_KEY_POINTER, problems)
  const redis = resolveRedisUrl(settings.PROXY_REDIS_URL, settings.PROXY_REDIS_URL_FILE)
  problems.push(...redis.problems)
  const webhooks = resolveWebhooks(settings, variables, problems, warnings)
  const sealingSecret = resolveSealingSecret(settings, problems)
  const approvals = resolveApprovals(settings, sealingSecret, problems)
  const consoleConfig = resolveConsole(settings, problems, warnings)
  problems.push(...sameSecretProblems(settings, redisPassword(redis.url)))
  const mcp = resolveMcp(settings, problems, warnings)
  const payments = resolvePayments(settings, variables, sealingSecret, problems, warnings)
  if (problems.length > 0) throw new ConfigError(problems)

  const config: Config = {
    environments,
    baseUrls,
    defaultEnvironment,
    listen: { host: settings.PROXY_HOST, port: settings.PROXY_PORT },
    token: {
      refreshMarginS: settings.PROXY_TOKEN_REFRESH_MARGIN_SECONDS,
      timeoutS: settings.PROXY_TOKEN_TIMEOUT_SECONDS,
      maxLifetimeS: settings.PROXY_TOKEN_MAX_LIFETIME_SECONDS,
      retryMinS: settings.PROXY_TOKEN_RETRY_MIN_SECONDS,
      retryMaxS: settings.PROXY_TOKEN_RETRY_MAX_SECONDS,
    },
    upstream: {
      timeoutS: settings.PROXY_UPSTREAM_TIMEOUT_SECONDS,
      connections: settings.PROXY_UPSTREAM_CONNECTIONS,
      ipFamily: settings.PROXY_OUTBOUND_IP_FAMILY,
    },
    access,
    bodyLimitBytes: settings.PROXY_BODY_LIMIT_BYTES,
    egress,
    shutdownGraceS: settings.PROXY_SHUTDOWN_GRACE_SECONDS,
    logLevel: settings.LOG_LEVEL,
    callers: { file: settings.PROXY_CALLERS_FILE ?? null },
    idempotency: {
      enabled: settings.PROXY_IDEMPOTENCY === 'on',
      keyPointer: settings.PROXY_IDEMPOTENCY_KEY_POINTER,
      ttlS: settings.PROXY_IDEMPOTENCY_TTL_SECONDS,
    },
    paths: { allowDots: settings.PROXY_PATH_ALLOW_DOTS === 'true' },
    state: { redisUrl: redis.url, keyPrefix: settings.PROXY_REDIS_KEY_PREFIX },
    webhooks,
    approvals,
    console: consoleConfig,
    mcp,
    payments,
    secretFiles: secrets.files,
  }
  if (!isLoopbackBind(config.listen.host) && access.allowedClients.every(isLoopbackCidr)) {
    warnings.push(`PROXY_HOST=${config.listen.host} accepts connections from other hosts, but PROXY_ALLOWED_CLIENTS allows loopback only: right for a sidecar whose application shares its network namespace (same Pod, compose network_mode); otherwise set PROXY_ALLOWED_CLIENTS to your applications' network`)
  }
  return { config: deepFreeze(config), warnings, settings: Object.freeze(settings) }
}

/**
 * The variables and `.env` through the schema (settings-reader.ts). `.env` is merged here so that its
 * values get the same treatment as the variables (empty means unset). An invalid variable
 * is reported, then dropped so its default applies and every other problem is reported too.
 */
function readSettings (env: Env, options: LoadOptions, problems: string[]): { variables: Env, settings: RawSettings, invalid: ReadonlySet<string> } {
  const fromFile = options.dotenvPath === undefined ? {} : readDotenv(options.dotenvPath, problems)
  // A variable set in the environment wins over `.env` even when empty, and empty means unset: an
  // operator's `PROXY_CALLERS_FILE=` turns the file's callers off.
  const variables: Env = { ...fromFile, ...env }
  const data = knownValues(variables)
  const invalid = new Set<string>()
  try {
    return { variables, settings: readSettingsVariables<RawSettings>(data), invalid }
  } catch (err) {
    const found = schemaProblems(err)
    problems.push(...found.map((f) => f.problem))
    for (const f of found) invalid.add(f.variable)
    return { variables, settings: readSettingsVariables<RawSettings>(Object.fromEntries(Object.entries(data).filter(([k]) => !invalid.has(k)))), invalid }
  }
}

/** The schema's names, and the `_FILE` form of every secret, whether or not the schema lists it. */
const KNOWN_NAMES: ReadonlySet<string> = new Set([...KNOWN_VARIABLES, ...SECRET_VARIABLES.map((name) => `${name}_FILE`)])

/** Unknown PAYMENTS_ and PROXY_ names stop the start, unless PROXY_ALLOW_UNKNOWN_VARIABLES=true makes them warnings. */
function reportUnknownVariables (variables: Env, settings: RawSettings, problems: string[], warnings: string[]): void {
  const allowed = settings.PROXY_ALLOW_UNKNOWN_VARIABLES === 'true'
  for (const unknown of findUnknownVariables(Object.keys(variables), KNOWN_NAMES)) {
    if (allowed) warnings.push(`${describeUnknown(unknown)} (ignored: PROXY_ALLOW_UNKNOWN_VARIABLES=true)`)
    else problems.push(`${describeUnknown(unknown)} (a misspelt setting would be ignored; set PROXY_ALLOW_UNKNOWN_VARIABLES=true to start anyway)`)
  }
}

/** A sandbox-only deployment may name its sandbox base alone; production, or deriving the sandbox base, needs it. */
function requireFiatBase (settings: RawSettings, secrets: SecretsResult, invalid: ReadonlySet<string>, problems: string[]): void {
  const productionKeys = secrets.values.PAYMENTS_PRODUCTION_API_KEY !== undefined || secrets.values.PAYMENTS_PRODUCTION_PUBLIC_KEY !== undefined
  const fiatBaseNeeded = productionKeys || settings.PAYMENTS_FIAT_SANDBOX_BASE_URL === undefined
  if (settings.PAYMENTS_FIAT_BASE_URL === undefined && fiatBaseNeeded && !invalid.has('PAYMENTS_FIAT_BASE_URL')) {
    problems.push('PAYMENTS_FIAT_BASE_URL is required (the fiat production base, e.g. https://api-v2.honeycoin.app/api/b2b)')
  }
}

/** The named environment, or the only one configured; with both and none named, short routes answer 404 (SPEC §3). */
function resolveDefaultEnvironment (settings: RawSettings, enabled: readonly EnvironmentName[], problems: string[], warnings: string[]): EnvironmentName | null {
  const named = settings.PROXY_DEFAULT_ENVIRONMENT
  if (named !== undefined) {
    if (enabled.length > 0 && !enabled.includes(named)) problems.push(`PROXY_DEFAULT_ENVIRONMENT: ${named} has no credentials configured`)
    return named
  }
  if (enabled.length === 1) return enabled[0] ?? null
  if (enabled.length > 1) warnings.push('both environments are configured and PROXY_DEFAULT_ENVIRONMENT is not set: /fiat/* and /crypto/* answer 404 ENVIRONMENT_NOT_CONFIGURED')
  return null
}

function resolveEgress (settings: RawSettings, problems: string[]): Config['egress'] {
  const expectedIps = parseList(settings.PROXY_EXPECTED_EGRESS_IPS, 'PROXY_EXPECTED_EGRESS_IPS', (s) => isIP(s) !== 0 ? s : null, 'an IP address', problems)
  let url: string | null = null
  if (settings.PROXY_EGRESS_IP_URL.toLowerCase() !== 'off') {
    const checked = checkBaseUrl(settings.PROXY_EGRESS_IP_URL)
    if (checked.ok) url = settings.PROXY_EGRESS_IP_URL
    else problems.push(`PROXY_EGRESS_IP_URL ${checked.problem} (or 'off')`)
  }
  return { url, intervalS: settings.PROXY_EGRESS_IP_INTERVAL_SECONDS, expectedIps }
}

/** SPEC §13: an agent is known by its caller key, so MCP needs a callers file. */
function resolveMcp (settings: RawSettings, problems: string[], warnings: string[]): Config['mcp'] {
  const enabled = settings.PROXY_MCP === 'on'
  const toolsFile = settings.PROXY_MCP_TOOLS_FILE ?? null
  if (enabled && settings.PROXY_CALLERS_FILE === undefined) problems.push('PROXY_MCP=on needs PROXY_CALLERS_FILE: agents over MCP are identified by their caller key (SPEC §13)')
  if (!enabled && toolsFile !== null) warnings.push('PROXY_MCP_TOOLS_FILE is set but PROXY_MCP is off: the tools are not served')
  return { enabled, toolsFile }
}

function checkTokenTiming (settings: RawSettings, problems: string[], warnings: string[]): void {
  if (settings.PROXY_TOKEN_RETRY_MIN_SECONDS > settings.PROXY_TOKEN_RETRY_MAX_SECONDS) {
    problems.push('PROXY_TOKEN_RETRY_MIN_SECONDS must not exceed PROXY_TOKEN_RETRY_MAX_SECONDS')
  } else if (settings.PROXY_TOKEN_RETRY_MIN_SECONDS * 2 > settings.PROXY_TOKEN_REFRESH_MARGIN_SECONDS) {
    // Retries are spaced at least half the minimum apart, even when that passes the token's expiry.
    warnings.push('PROXY_TOKEN_RETRY_MIN_SECONDS is over half of PROXY_TOKEN_REFRESH_MARGIN_SECONDS: after a failed refresh the token may lapse before the next attempt')
  }
}

function checkListenHost (host: string, problems: string[]): void {
  if (isIP(host) === 0 && host !== 'localhost') {
    problems.push('PROXY_HOST must be an IP address to listen on (e.g. 127.0.0.1, or 0.0.0.0 in a container)')
  }
}

const JSON_POINTER = new RegExp(JSON_POINTER_PATTERN)

/** A member, not the whole body: a pointer that can never match would turn idempotency off without a word. */
function checkReferencePointer (pointer: string, problems: string[]): void {
  if (pointer === '' || !JSON_POINTER.test(pointer)) {
    problems.push('PROXY_IDEMPOTENCY_KEY_POINTER must be a JSON Pointer (RFC 6901) to a member of the body, such as /externalReference or /meta/reference')
  }
}

function resolveBaseUrls (settings: RawSettings, problems: string[], warnings: string[]): Config['baseUrls'] {
  const pick = (name: string, raw: string | undefined): string | undefined => {
    if (raw === undefined) return undefined
    const checked = checkBaseUrl(raw)
    if (!checked.ok) { problems.push(`${name} ${checked.problem}`); return undefined }
    if (isPlainHttpToRemote(checked.url)) warnings.push(`${name} uses plain http to a remote host: tokens would cross the network unencrypted`)
    return checked.url
  }
  const fiat = pick('PAYMENTS_FIAT_BASE_URL', settings.PAYMENTS_FIAT_BASE_URL)
  const crypto = pick('PAYMENTS_CRYPTO_BASE_URL', settings.PAYMENTS_CRYPTO_BASE_URL)
  const sandbox = (name: string, explicit: string | undefined, production: string | undefined): string | undefined => {
    if (explicit !== undefined) return pick(name, explicit)
    if (production === undefined) return undefined
    const derived = deriveSandboxBaseUrl(production)
    return derived.ok ? derived.url : undefined
  }
  return {
    production: { fiat, crypto },
    sandbox: {
      fiat: sandbox('PAYMENTS_FIAT_SANDBOX_BASE_URL', settings.PAYMENTS_FIAT_SANDBOX_BASE_URL, fiat),
      crypto: sandbox('PAYMENTS_CRYPTO_SANDBOX_BASE_URL', settings.PAYMENTS_CRYPTO_SANDBOX_BASE_URL, crypto),
    },
  }
}

/** The environments with both keys; one with one key only is reported. */
function resolveEnvironments (secrets: SecretsResult, baseUrls: Config['baseUrls'], problems: string[], warnings: string[]): Config['environments'] {
  const environments: Partial<Record<EnvironmentName, EnvironmentConfig>> = {}
  for (const name of ENVIRONMENTS) {
    const prefix = `PAYMENTS_${name.toUpperCase() as Uppercase<EnvironmentName>}` as const
    const apiKey = secrets.values[`${prefix}_API_KEY`]
    const publicKey = secrets.values[`${prefix}_PUBLIC_KEY`]
    if (apiKey === undefined && publicKey === undefined) continue
    if (apiKey === undefined || publicKey === undefined) {
      const missing = apiKey === undefined ? `${prefix}_API_KEY` as const : `${prefix}_PUBLIC_KEY` as const
      // A value that was set but refused (unreadable file, bad characters) has its own line already.
      if (!secrets.refused.has(missing)) problems.push(`${missing} is missing: ${name} needs both keys (or neither)`)
      continue
    }
    if (!apiKey.startsWith(API_KEY_PREFIX)) warnings.push(`${prefix}_API_KEY does not start with the provider's prefix ${API_KEY_PREFIX}: check it is an API key, not a public key`)
    const urls = baseUrls[name]
    if (urls.fiat === undefined) {
      if (name === 'sandbox' && baseUrls.production.fiat !== undefined) {
        problems.push('PAYMENTS_FIAT_SANDBOX_BASE_URL is required: it cannot be derived because the production path does not start with /api')
      }
      continue
    }
    if (name === 'sandbox' && urls.crypto === undefined && baseUrls.production.crypto !== undefined) {
      problems.push('PAYMENTS_CRYPTO_SANDBOX_BASE_URL is required: it cannot be derived because the production path does not start with /api')
    }
    const interfaces: Partial<Record<InterfaceName, string>> = { fiat: urls.fiat }
    if (urls.crypto !== undefined) interfaces.crypto = urls.crypto
    environments[name] = { name, credentials: { apiKey, publicKey }, baseUrls: interfaces, tokenUrl: `${urls.fiat}${TOKEN_PATH}` }
  }
  return environments
}

function knownValues (env: Env): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => KNOWN_VARIABLES.has(e[0]) && e[1] !== undefined && e[1] !== ''))
}

function readDotenv (path: string, problems: string[]): Env {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    // The CLI passes the path only when the file exists; one deleted in between is simply absent.
    if (code !== 'ENOENT') problems.push(`${path}: cannot read (${code ?? 'error'})`)
    return {}
  }
  return parseEnv(text)
}

function errorKind (err: unknown): string {
  const name = err instanceof Error ? err.name : typeof err
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? `${name} ${code}` : name
}

function parseList<T> (value: string, name: string, parse: (s: string) => T | null, expected: string, problems: string[]): T[] {
  const out: T[] = []
  for (const item of splitList(value)) {
    const parsed = parse(item)
    if (parsed === null) problems.push(`${name}: "${item}" is not ${expected}`)
    else out.push(parsed)
  }
  return out
}

interface AjvError { instancePath?: string, message?: string, params?: Record<string, unknown> }

function schemaProblems (err: unknown): Array<{ variable: string, problem: string }> {
  const errors = (err as { errors?: AjvError[] }).errors
  if (!Array.isArray(errors)) throw err
  const seen = new Set<string>()
  const out: Array<{ variable: string, problem: string }> = []
  for (const e of errors) {
    const variable = (e.instancePath ?? '').replace(/^\//, '')
    const allowed = e.params?.['allowedValues']
    const problem = `${variable} ${Array.isArray(allowed) ? `must be one of ${allowed.join(', ')}` : e.message ?? 'is invalid'}`
    if (seen.has(problem)) continue
    seen.add(problem)
    out.push({ variable, problem })
  }
  return out
}

function isLoopbackBind (host: string): boolean {
  return host === 'localhost' || host.startsWith('127.') || host === '::1'
}

function isLoopbackCidr (cidr: Cidr): boolean {
  return cidr.family === 'ipv4' ? cidr.address.startsWith('127.') && cidr.prefix >= 8 : cidr.address === '::1' && cidr.prefix === 128
}

function deepFreeze<T> (value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

/** The password of a Redis URL, decoded, or null (also for a URL that does not parse: reported elsewhere). */
function redisPassword (url: string | null): string | null {
  if (url === null) return null
  try {
    return decodeURIComponent(new URL(url).password)
  } catch {
    return null
  }
}
