/**
 * The Node versions the project runs on: 22 and 24, 24 recommended (the image's). Node 20 reached
 * its end of life in April 2026, and the one SQLite driver, better-sqlite3 13 (Node-API, prebuilt),
 * crashes on it. README "Node versions".
 */
export const OLDEST_SUPPORTED_NODE_MAJOR = 22

/** null when `version` (`process.versions.node`) is supported, else the sentence an operator reads. */
export function unsupportedNode (version: string): string | null {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1])
  if (major >= OLDEST_SUPPORTED_NODE_MAJOR) return null
  return `Node ${version} is not supported: run it on Node 22 or 24 (24 recommended)`
}
