/**
 * What SIGHUP cannot apply. The configuration the process would load now is compared with the one
 * it started with, variable by variable: credentials are rotated live (credential-rotation.ts) and
 * the callers file's contents are reloaded live (callers-holder.ts); every other changed variable
 * only takes effect at the next start, so it is logged at `error` and shown in `/readyz` as
 * `restartRequired` until the process restarts or the change is undone. Names only, never values.
 */
import type { Logger } from 'pino'
import { ENVIRONMENTS, type LoadedConfig } from '../config/config.js'
import { KNOWN_VARIABLES, SECRET_VARIABLES } from '../config/schema.js'

/** Credentials: rotated live, as long as the environment they enable stays enabled. */
const LIVE: ReadonlySet<string> = new Set(SECRET_VARIABLES.flatMap((name) => [name, `${name}_FILE`]))

/** Pure: the variables whose change needs a restart, sorted. */
export function changesNeedingRestart (running: LoadedConfig, next: LoadedConfig): string[] {
  const changed = new Set<string>()
  const before = running.settings as Readonly<Record<string, unknown>>
  const after = next.settings as Readonly<Record<string, unknown>>
  for (const name of KNOWN_VARIABLES) {
    if (!LIVE.has(name) && before[name] !== after[name]) changed.add(name)
  }
  // The same file name with another URL in it is a change of the store too.
  if (running.config.state.redisUrl !== next.config.state.redisUrl) {
    changed.add(after['PROXY_REDIS_URL_FILE'] !== undefined ? 'PROXY_REDIS_URL_FILE' : 'PROXY_REDIS_URL')
  }
  for (const environment of ENVIRONMENTS) {
    if ((running.config.environments[environment] === undefined) ===
      (next.config.environments[environment] === undefined)) continue
    const prefix = `PAYMENTS_${environment.toUpperCase()}`
    for (const name of [`${prefix}_API_KEY`, `${prefix}_PUBLIC_KEY`]) changed.add(after[`${name}_FILE`] !== undefined || before[`${name}_FILE`] !== undefined ? `${name}_FILE` : name)
  }
  return [...changed].sort()
}

export interface RestartNotice {
  /** The variables changed since the start that only a restart applies; empty when none. */
  current: () => readonly string[]
  /** Records the result of one reload's comparison, logging each variable once per reload. */
  update: (names: readonly string[]) => void
}

export function createRestartNotice (log: Logger): RestartNotice {
  let names: readonly string[] = []
  return {
    current: () => names,
    update (next) {
      names = Object.freeze([...next])
      for (const variable of names) log.error({ variable }, 'configuration changed but not applied: restart the proxy to apply it')
    },
  }
}
