/**
 * The callers file (SPEC §7), read first, so an invalid one stops the start before anything is
 * opened. Imported only when there is a file: its reader brings the YAML parser and TypeBox's
 * checker, which a start without callers need not load. A reload is refused for what a feature
 * that is off would be needed for.
 */
import type { Logger } from 'pino'
import type { CallersHolder } from '../callers/callers-holder.js'
import type { Config } from '../config/config.js'
import type { Feature } from '../feature/feature.js'

/**
 * `isOn(name)`: whether the feature of that name is on, asked at each reload (features start after the callers are
 * read).
 */
export async function openCallers (
  config: Config,
  log: Logger,
  features: readonly Feature[],
  isOn: (name: string) => boolean,
): Promise<CallersHolder | null> {
  if (config.callers.file === null) return null
  const [{ createCallersHolder }, reloadChecks] = await Promise.all([
    import('../callers/callers-holder.js'),
    Promise.all(features.map(async (feature) => ({ name: feature.name, check: await feature.callersReloadCheck?.() }))),
  ])
  return createCallersHolder(
    config.callers.file,
    log,
    (specs) => reloadChecks.flatMap(({ name, check }) => isOn(name) || check === undefined ? [] : check(specs)),
  )
}
