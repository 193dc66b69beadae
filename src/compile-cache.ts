/**
 * Turns on Node's module compile cache (Node 22.1+) as early as the CLI can, so a start reads V8's
 * compiled code of modules instead of compiling them again. Feature-detected: Node 20 has no such
 * cache and starts as before. The image sets NODE_COMPILE_CACHE instead (a cache warmed at image
 * build time, covering the CLI's own static imports too); there Node has already enabled it and
 * this call only reports that.
 */
import nodeModule from 'node:module'

interface CompileCacheApi { enableCompileCache?: (directory?: string) => unknown }

export function enableCompileCache (): void {
  // Node 20's types do not declare it; on Node 20 the property is simply absent.
  const api = nodeModule as unknown as CompileCacheApi
  if (typeof api.enableCompileCache !== 'function') return
  // A cache that cannot be written (read-only file system) is skipped by Node, never an error.
  api.enableCompileCache()
}
