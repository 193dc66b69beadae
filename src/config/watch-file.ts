/**
 * Reload on a change of an operator's file (the callers file, SPEC §7; the MCP tools file, SPEC §13):
 * within 2 s, debounced, as editors write in several steps. The directory is watched, not the file:
 * an editor or a Kubernetes ConfigMap update replaces the file (ConfigMaps through a `..data` link).
 */
import { watch, type FSWatcher } from 'node:fs'
import { basename, dirname } from 'node:path'
import type { Logger } from 'pino'

export const RELOAD_DEBOUNCE_MS = 300

/** Calls `changed` after the file changed; returns the stop function. `what` names the file in the log. */
export function watchFile (file: string, changed: () => void, log: Logger, what: string): () => void {
  let timer: NodeJS.Timeout | null = null
  let watcher: FSWatcher | null = null
  try {
    watcher = watch(dirname(file), (_event, name) => {
      if (name !== null && name !== basename(file) && !name.startsWith('..')) return
      if (timer !== null) clearTimeout(timer)
      timer = setTimeout(() => { timer = null; changed() }, RELOAD_DEBOUNCE_MS)
    })
  } catch {
    log.warn({ file: basename(file) }, `${what} cannot be watched; reload with SIGHUP`)
  }
  return () => {
    if (timer !== null) clearTimeout(timer)
    watcher?.close()
  }
}
