/**
 * A feature's settings slot: its part of the configuration resolved from the variables the schema
 * read, its problems and warnings reported beside every other (the loader reports them all at
 * once). The loader goes through the features list and names none of them.
 */
import type { Config } from '../config/config.js'
import type { RawSettings } from '../config/schema.js'

export interface SettingsInput {
  readonly settings: RawSettings
  /** The variables as given (with `.env` under them): what a `_FILE` form or a list by prefix is read from. */
  readonly variables: Readonly<Record<string, string | undefined>>
  /** PROXY_SEALING_SECRET read once (null when unset or refused): approvals and payments both seal with it. */
  readonly sealingSecret: string | null
  readonly problems: string[]
  readonly warnings: string[]
}

/** The configuration's members that the features resolve, each by exactly one feature. */
const FEATURE_SETTINGS = ['webhooks', 'approvals', 'payments', 'duplicates', 'oauth', 'mcp', 'console'] as const satisfies ReadonlyArray<keyof Config>

export type FeatureSettings = Pick<Config, typeof FEATURE_SETTINGS[number]>

export type ResolveSettings = (input: SettingsInput) => Partial<FeatureSettings>

/** Every feature's settings in one object; a member no feature resolved is a programming error, not an operator's. */
export function collectFeatureSettings (
  resolvers: ReadonlyArray<ResolveSettings | undefined>,
  input: SettingsInput,
): FeatureSettings {
  const resolved: Partial<FeatureSettings> = {}
  for (const resolve of resolvers) Object.assign(resolved, resolve?.(input))
  const missing = FEATURE_SETTINGS.filter((key) => !(key in resolved))
  if (missing.length > 0) throw new Error(`no feature resolves the ${missing.join(', ')} settings`)
  return resolved as FeatureSettings
}
