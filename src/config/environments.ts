/**
 * The provider's environments (SPEC §1, §3): each with both keys and its base URLs (the sandbox's
 * derived from production's where not named), and the default one that short routes use.
 */
import { checkBaseUrl, deriveSandboxBaseUrl, isPlainHttpToRemote } from './base-urls.js'
import { ENVIRONMENTS, TOKEN_PATH, type Config, type EnvironmentConfig, type EnvironmentName, type InterfaceName } from './config.js'
import type { RawSettings } from './schema.js'
import type { SecretsResult } from './secrets.js'

/** The provider's API keys carry this vendor prefix (SPEC §1); another prefix is suspicious, not fatal. */
const API_KEY_PREFIX = 'HC_'

export type EnvironmentsPart = Pick<Config, 'environments' | 'baseUrls' | 'defaultEnvironment'>

export function resolveEnvironmentsPart (
  settings: RawSettings,
  secrets: SecretsResult,
  invalid: ReadonlySet<string>,
  problems: string[],
  warnings: string[],
): EnvironmentsPart {
  requireFiatBase(settings, secrets, invalid, problems)
  const baseUrls = resolveBaseUrls(settings, problems, warnings)
  const environments = resolveEnvironments(secrets, baseUrls, problems, warnings)
  const enabled = ENVIRONMENTS.filter((e) => environments[e] !== undefined)
  // Only when no key was given at all: keys held back by a bad base URL already have that URL's line.
  if (Object.keys(secrets.values).length === 0 && secrets.problems.length === 0) {
    problems.push('no environment configured: set PAYMENTS_PRODUCTION_API_KEY and PAYMENTS_PRODUCTION_PUBLIC_KEY, or the PAYMENTS_SANDBOX_ pair (or their _FILE variants)')
  }
  return {
    environments,
    baseUrls,
    defaultEnvironment: resolveDefaultEnvironment(settings, enabled, problems, warnings),
  }
}

/** A sandbox-only deployment may name its sandbox base alone; production, or deriving the sandbox base, needs it. */
function requireFiatBase (
  settings: RawSettings,
  secrets: SecretsResult,
  invalid: ReadonlySet<string>,
  problems: string[],
): void {
  const productionKeys = secrets.values.PAYMENTS_PRODUCTION_API_KEY !== undefined ||
    secrets.values.PAYMENTS_PRODUCTION_PUBLIC_KEY !== undefined
  const fiatBaseNeeded = productionKeys || settings.PAYMENTS_FIAT_SANDBOX_BASE_URL === undefined
  if (settings.PAYMENTS_FIAT_BASE_URL === undefined && fiatBaseNeeded && !invalid.has('PAYMENTS_FIAT_BASE_URL')) {
    problems.push('PAYMENTS_FIAT_BASE_URL is required (the fiat production base, e.g. https://api-v2.honeycoin.app/api/b2b)')
  }
}

/** The named environment, or the only one configured; with both and none named, short routes answer 404 (SPEC §3). */
function resolveDefaultEnvironment (
  settings: RawSettings,
  enabled: readonly EnvironmentName[],
  problems: string[],
  warnings: string[],
): EnvironmentName | null {
  const named = settings.PROXY_DEFAULT_ENVIRONMENT
  if (named !== undefined) {
    if (enabled.length > 0 && !enabled.includes(named)) problems.push(`PROXY_DEFAULT_ENVIRONMENT: ${named} has no credentials configured`)
    return named
  }
  if (enabled.length === 1) return enabled[0] ?? null
  if (enabled.length > 1) warnings.push('both environments are configured and PROXY_DEFAULT_ENVIRONMENT is not set: /fiat/* and /crypto/* answer 404 ENVIRONMENT_NOT_CONFIGURED')
  return null
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
