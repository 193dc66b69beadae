/**
 * The tool catalogue in force and its reload (SPEC §13: SIGHUP reloads the tools file as §7 reloads
 * the callers file: at once on SIGHUP, within 2 s of a change of the file). An invalid file at start
 * stops the start naming the field; on a reload it is refused with an error log, and the tools in
 * force stay.
 */
import type { Logger } from 'pino'
import { ConfigError } from '../config/config-error.js'
import { watchFile } from '../config/watch-file.js'
import type { FeatureTool } from '../feature/feature-tools.js'
import type { PathOptions } from '../routing/canonical-path.js'
import { buildCatalogue, type CatalogueTool } from './tool-catalogue.js'
import { readToolsFile } from './tools-file.js'

export interface ToolsHolder {
  current: () => readonly CatalogueTool[]
  /** Re-reads the tools file; false (and the tools in force kept) when it is invalid. */
  reload: (trigger: string) => boolean
  /** Reloads when the file changes; returns the stop function. */
  watch: () => () => void
}

export function createToolsHolder (
  file: string | null,
  paths: PathOptions,
  featureTools: readonly FeatureTool[],
  log: Logger,
): ToolsHolder {
  if (file === null) {
    const catalogue = buildCatalogue([], featureTools)
    return { current: () => catalogue, reload: () => true, watch: () => () => {} }
  }
  const first = readToolsFile(file, paths)
  if (!first.ok) throw new ConfigError(first.problems)
  let catalogue = buildCatalogue(first.tools, featureTools)
  const reload = (trigger: string): boolean => {
    const read = readToolsFile(file, paths)
    if (!read.ok) {
      log.error({ trigger, problems: read.problems }, 'MCP tools file refused; the tools in force stay')
      return false
    }
    catalogue = buildCatalogue(read.tools, featureTools)
    log.info({ trigger, tools: read.tools.length }, 'MCP tools file reloaded')
    return true
  }
  return {
    current: () => catalogue,
    reload,
    watch: () => watchFile(file, () => { reload('MCP tools file changed') }, log, 'MCP tools file'),
  }
}
