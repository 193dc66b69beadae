/**
 * The callers in force, and their reload (SPEC §7): SIGHUP re-reads the file at once, a change of
 * the file within 2 s (debounced, as editors write in several steps). An invalid file is refused
 * with an error log naming each problem, and the old callers keep working.
 */
import type { Logger } from 'pino'
import { ConfigError } from '../config/config-error.js'
import { watchFile } from '../config/watch-file.js'
import { readCallersFile, type CallerSpec } from './callers-file.js'
import { indexCallers, type CallerIndex } from './judge-caller.js'

export interface CallersHolder {
  current: () => CallerIndex
  /** Re-reads the file; false (and the old callers kept) when it is invalid. */
  reload: (trigger: string) => boolean
  /** Reloads when the file changes; returns the stop function. */
  watch: () => () => void
}

/**
 * Throws ConfigError (one problem per line, naming the file and field) when the file is invalid at
 * start. `reloadCheck` refuses a reloaded file for what only a restart can apply (approvals, SPEC §11).
 */
export function createCallersHolder (
  file: string,
  log: Logger,
  reloadCheck: (callers: CallerSpec[]) => string[] = () => [],
): CallersHolder {
  const first = readCallersFile(file)
  if (!first.ok) throw new ConfigError(first.problems)
  let index = indexCallers(first.callers)
  const reload = (trigger: string): boolean => {
    const read = readCallersFile(file)
    const problems = read.ok ? reloadCheck(read.callers) : []
    const load = problems.length > 0 ? { ok: false as const, problems } : read
    if (!load.ok) {
      log.error({ trigger, problems: load.problems }, 'callers file refused; the previous callers stay in force')
      return false
    }
    index = indexCallers(load.callers)
    log.info({ trigger, callers: load.callers.length }, 'callers file reloaded')
    return true
  }
  return {
    current: () => index,
    reload,
    watch: () => watchFile(file, () => { reload('callers file changed') }, log, 'callers file'),
  }
}
