/**
 * Builds the typed Config from a plain variables object (process.env plus `.env` in the CLI, a
 * literal object in tests). Every problem is collected and reported at once, each naming the
 * variable and the rule; values are never echoed because some of them are secrets. The features
 * resolve their own parts through the features list.
 */
import { FEATURES } from './features/index.js'
import { collectFeatureSettings } from './feature/feature-settings.js'
import type { Config, LoadedConfig } from './config/config.js'
import { ConfigError } from './config/config-error.js'
import { sameSecretProblems } from './config/distinct-secrets.js'
import { resolveEnvironmentsPart } from './config/environments.js'
import { accessWarnings, resolveProxySettings } from './config/proxy-settings.js'
import { readSettings, type Env } from './config/read-settings.js'
import { resolveRedisUrl } from './config/redis-url.js'
import { resolveSealingSecret } from './config/sealing-secret.js'
import { readSecrets } from './config/secrets.js'

export type { Env } from './config/read-settings.js'

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
  const { variables, settings, invalid } = readSettings(env, options.dotenvPath, problems, warnings)
  const secrets = readSecrets(settings)
  problems.push(...secrets.problems)
  const environments = resolveEnvironmentsPart(settings, secrets, invalid, problems, warnings)
  const redis = resolveRedisUrl(settings.PROXY_REDIS_URL, settings.PROXY_REDIS_URL_FILE)
  const proxy = resolveProxySettings(settings, redis.url, problems, warnings)
  problems.push(...redis.problems)
  const sealingSecret = resolveSealingSecret(settings, problems)
  const features = collectFeatureSettings(FEATURES.map((feature) => feature.settings), {
    settings,
    variables,
    sealingSecret,
    problems,
    warnings,
  })
  problems.push(...sameSecretProblems(settings, redisPassword(redis.url)))
  if (problems.length > 0) throw new ConfigError(problems)
  const config: Config = { ...environments, ...proxy, ...features, secretFiles: secrets.files }
  warnings.push(...accessWarnings(config))
  return { config: deepFreeze(config), warnings, settings: Object.freeze(settings) }
}

function errorKind (err: unknown): string {
  const name = err instanceof Error ? err.name : typeof err
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? `${name} ${code}` : name
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
