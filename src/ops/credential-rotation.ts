/**
 * Key rotation without restart (SPEC §5 "Secret rotation"): the configuration is read again; a
 * valid new set replaces the credentials, and the tokens obtained with the old ones, of every
 * environment whose keys changed; an invalid set is refused and the old one keeps serving.
 * Enabling or disabling an environment changes the routes, which needs a restart.
 */
import { watchFile, unwatchFile } from 'node:fs'
import type { Logger } from 'pino'
import { ENVIRONMENTS, type Config, type EnvironmentName } from '../config/config.js'
import { ConfigError, type LoadedConfig } from '../config/load-config.js'
import type { TokenSource } from '../tokens/token-source.js'

/** Secret files are polled: Kubernetes replaces them through a symlink swap that inotify misses. */
export const SECRET_FILE_POLL_MS = 2_000

export type RotationResult = { outcome: 'rotated', environments: EnvironmentName[] } | { outcome: 'unchanged' } | { outcome: 'refused', problems: readonly string[] }

export function rotateCredentials (
  current: Config,
  load: () => LoadedConfig,
  sources: ReadonlyMap<EnvironmentName, TokenSource>,
  log: Logger,
): { result: RotationResult, config: Config } {
  let next: Config
  try {
    next = load().config
  } catch (err) {
    const problems = err instanceof ConfigError ? err.problems : [(err as Error).message]
    log.error({ problems }, 'credential reload refused: keeping the current credentials')
    return { result: { outcome: 'refused', problems }, config: current }
  }
  const changedShape = ENVIRONMENTS.filter((e) => (current.environments[e] === undefined) !== (next.environments[e] === undefined))
  if (changedShape.length > 0) {
    const problems = changedShape.map((e) => `${e} would be ${next.environments[e] === undefined ? 'disabled' : 'enabled'}: restart the proxy to change which environments are served`)
    log.error({ problems }, 'credential reload refused: keeping the current credentials')
    return { result: { outcome: 'refused', problems }, config: current }
  }
  if (JSON.stringify(current.baseUrls) !== JSON.stringify(next.baseUrls)) {
    // Routes keep the upstreams chosen at start: new keys must not fetch tokens from another host.
    const problems = ['the provider base URLs changed: restart the proxy to change upstreams']
    log.error({ problems }, 'credential reload refused: keeping the current credentials')
    return { result: { outcome: 'refused', problems }, config: current }
  }
  const rotated: EnvironmentName[] = []
  for (const [name, source] of sources) {
    const before = current.environments[name]?.credentials
    const after = next.environments[name]
    if (after === undefined || before === undefined) continue
    if (before.apiKey === after.credentials.apiKey && before.publicKey === after.credentials.publicKey) continue
    source.replaceEnvironment(after)
    rotated.push(name)
  }
  if (rotated.length === 0) {
    log.info('credential reload: nothing changed')
    return { result: { outcome: 'unchanged' }, config: current }
  }
  log.info({ environments: rotated }, 'credentials rotated; fetching new tokens')
  return { result: { outcome: 'rotated', environments: rotated }, config: next }
}

/** Calls `onChange` when any of the files changes; returns the function that stops watching. */
export function watchSecretFiles (files: readonly string[], onChange: () => void): () => void {
  const listener = (now: { mtimeMs: number, ino: number, size: number }, before: { mtimeMs: number, ino: number, size: number }): void => {
    if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size) onChange()
  }
  for (const file of files) watchFile(file, { interval: SECRET_FILE_POLL_MS, persistent: false }, listener)
  return () => { for (const file of files) unwatchFile(file, listener) }
}
