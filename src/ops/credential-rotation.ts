/**
 * Key rotation without restart (SPEC §5 "Secret rotation"). The configuration is read again, and
 * every environment whose keys changed must prove them first: a token obtained with the new pair.
 * Only then are its credentials and token swapped. Keys the provider rejects (or a half-written
 * pair) change nothing: the old token keeps serving, an error is logged, a metric counts it and
 * `/readyz` shows the failed rotation. An invalid configuration is refused the same way.
 * Enabling or disabling an environment, or moving its upstreams, needs a restart.
 */
import { watchFile, unwatchFile } from 'node:fs'
import type { Logger } from 'pino'
import { Counter, type Registry } from 'prom-client'
import { ENVIRONMENTS, type Config, type EnvironmentConfig, type EnvironmentName, type LoadedConfig } from '../config/config.js'
import { ConfigError } from '../config/config-error.js'
import type { FetchToken } from '../tokens/token-client.js'
import { TokenRequestError } from '../tokens/token-grant.js'
import type { TokenSource } from '../tokens/token-source.js'

/** Secret files are polled: Kubernetes replaces them through a symlink swap that inotify misses. */
export const SECRET_FILE_POLL_MS = 400
/** Files rewritten together (API key, then public key) count as one change once quiet this long. */
export const SECRET_FILE_QUIET_MS = 1_500

export type RotationPlan =
  | { outcome: 'unchanged' }
  | { outcome: 'refused', problems: readonly string[] }
  | { outcome: 'changed', environments: readonly EnvironmentConfig[] }

/** Pure: what a re-read configuration asks of the running one. */
export function planRotation (current: Config, next: Config): RotationPlan {
  const changedShape = ENVIRONMENTS.filter(
    (e) => (current.environments[e] === undefined) !== (next.environments[e] === undefined),
  )
  if (changedShape.length > 0) {
    return { outcome: 'refused', problems: changedShape.map((e) => `${e} would be ${next.environments[e] === undefined ? 'disabled' : 'enabled'}: restart the proxy to change which environments are served`) }
  }
  if (JSON.stringify(current.baseUrls) !== JSON.stringify(next.baseUrls)) {
    // Routes keep the upstreams chosen at start: new keys must not fetch tokens from another host.
    return { outcome: 'refused', problems: ['the provider base URLs changed: restart the proxy to change upstreams'] }
  }
  const environments = ENVIRONMENTS.flatMap((name) => {
    const before = current.environments[name]?.credentials
    const after = next.environments[name]
    if (before === undefined || after === undefined) return []
    return before.apiKey === after.credentials.apiKey && before.publicKey === after.credentials.publicKey ? [] : [after]
  })
  return environments.length === 0 ? { outcome: 'unchanged' } : { outcome: 'changed', environments }
}

export interface RotationAttempt {
  /** Unix seconds of the last rotation that concerned this environment. */
  at: number
  ok: boolean
  /** Why it failed, for operators; never a key. */
  problem?: string
}

export interface CredentialRotationDeps {
  sources: ReadonlyMap<EnvironmentName, TokenSource>
  fetchToken: FetchToken
  log: Logger
  registry: Registry
  metricPrefix: string
  nowS: () => number
}

export interface CredentialRotation {
  /** Re-reads and, where keys changed and are proven, swaps them; resolves to the configuration in force. */
  rotate: (current: Config, load: () => LoadedConfig) => Promise<Config>
  /** The last attempt per environment, for /readyz. */
  status: () => Partial<Record<EnvironmentName, RotationAttempt>>
}

export function createCredentialRotation (deps: CredentialRotationDeps): CredentialRotation {
  const { sources, fetchToken, log } = deps
  const attempts: Partial<Record<EnvironmentName, RotationAttempt>> = {}
  const rotations = new Counter({
    name: `${deps.metricPrefix}credential_rotations_total`,
    help: 'Credential reloads by environment and outcome (rotated: new keys proven and in use; rejected: the provider refused them; refused: invalid configuration)',
    labelNames: ['environment', 'outcome'],
    registers: [deps.registry],
  })

  function refuse (problems: readonly string[]): void {
    log.error({ problems }, 'credential reload refused: keeping the current credentials')
    for (const name of sources.keys()) {
      rotations.inc({ environment: name, outcome: 'refused' })
      attempts[name] = { at: deps.nowS(), ok: false, problem: 'the re-read configuration was invalid' }
    }
  }

  async function prove (environment: EnvironmentConfig): Promise<boolean> {
    const source = sources.get(environment.name)
    if (source === undefined) return false
    try {
      const grant = await fetchToken(environment)
      source.replaceEnvironment(environment, grant)
      rotations.inc({ environment: environment.name, outcome: 'rotated' })
      attempts[environment.name] = { at: deps.nowS(), ok: true }
      log.info({ environment: environment.name, expiresAt: grant.expiresAt }, 'credentials rotated: the new keys obtained a token')
      return true
    } catch (err) {
      const reason = err instanceof TokenRequestError ? err.reason : 'network'
      rotations.inc({ environment: environment.name, outcome: 'rejected' })
      attempts[environment.name] = { at: deps.nowS(), ok: false, problem: `the new ${environment.name} keys did not obtain a token (${reason}); the old ones are still in use` }
      log.error({ environment: environment.name, reason }, 'credential rotation failed: the new keys did not obtain a token; keeping the current credentials and token')
      return false
    }
  }

  return {
    async rotate (current, load) {
      let next: Config
      try {
        next = load().config
      } catch (err) {
        refuse(err instanceof ConfigError ? err.problems : ['the configuration could not be read'])
        return current
      }
      const plan = planRotation(current, next)
      if (plan.outcome === 'refused') { refuse(plan.problems); return current }
      if (plan.outcome === 'unchanged') { log.info('credential reload: nothing changed'); return current }
      const proven = await Promise.all(plan.environments.map(prove))
      const environments = { ...current.environments }
      plan.environments.forEach(
        (environment, i) => { if (proven[i] === true) environments[environment.name] = environment },
      )
      return Object.freeze({ ...current, environments: Object.freeze(environments) })
    },
    status: () => ({ ...attempts }),
  }
}

/**
 * Calls `onChange` once the files have changed and then stayed quiet for SECRET_FILE_QUIET_MS, so
 * a pair rewritten a second apart rotates once; returns the function that stops watching.
 */
export function watchSecretFiles (files: readonly string[], onChange: () => void): () => void {
  let quiet: NodeJS.Timeout | null = null
  const listener = (
    now: { mtimeMs: number, ino: number, size: number },
    before: { mtimeMs: number, ino: number, size: number },
  ): void => {
    if (now.mtimeMs === before.mtimeMs && now.ino === before.ino && now.size === before.size) return
    if (quiet !== null) clearTimeout(quiet)
    quiet = setTimeout(() => { quiet = null; onChange() }, SECRET_FILE_QUIET_MS)
    quiet.unref()
  }
  for (const file of files) watchFile(file, { interval: SECRET_FILE_POLL_MS, persistent: false }, listener)
  return () => {
    if (quiet !== null) clearTimeout(quiet)
    for (const file of files) unwatchFile(file, listener)
  }
}
