/**
 * SIGHUP and a changed secret file re-read the configuration: one reload at a time, each on the
 * configuration the previous one left in force. Credentials rotate live; every other variable that
 * differs from the start's is reported as needing a restart (ops/restart-required.ts).
 */
import type { Logger } from 'pino'
import type { Config, LoadedConfig } from '../config/config.js'
import { ConfigError } from '../config/config-error.js'
import type { CredentialRotation } from '../ops/credential-rotation.js'
import { changesNeedingRestart, type RestartNotice } from '../ops/restart-required.js'
import { loadFromEnvironment } from './exit.js'

export interface ReloadDeps { started: LoadedConfig, rotation: CredentialRotation, restart: RestartNotice, log: Logger }

export function credentialReloads (deps: ReloadDeps): (trigger: string) => void {
  const { started, rotation, restart, log } = deps
  let current: Config = started.config
  let rotating: Promise<void> = Promise.resolve()
  return (trigger) => {
    rotating = rotating.then(async () => {
      log.info({ trigger }, 'reloading credentials')
      let next: LoadedConfig | ConfigError
      try {
        next = loadFromEnvironment()
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err
        next = err
      }
      if (!(next instanceof ConfigError)) restart.update(changesNeedingRestart(started, next))
      current = await rotation.rotate(current, () => {
        if (next instanceof ConfigError) throw next
        return next
      })
    }).catch((err: unknown) => { log.error({ err }, 'credential reload failed') })
  }
}
