/**
 * Path globs of allow rules and amount limits (SPEC §7), compiled once with picomatch. They are
 * matched on the folded canonical path below the interface base (canonical-path.ts: segments of
 * `A-Z a-z 0-9 - _` only, lower-cased, without a trailing slash), so a limit cannot be dodged by
 * spelling: there is no other spelling left to try.
 */
import { LRUCache } from 'lru-cache'
import picomatch from 'picomatch'
import type { CanonicalPath } from '../routing/canonical-path.js'

export type PathRule = (folded: CanonicalPath) => boolean

/**
 * Rules are compiled once per distinct glob list: callers files repeat the same lists across
 * callers, and compiling each copy again would block the event loop for most of a large file's
 * reload.
 */
const compiled = new LRUCache<string, PathRule>({ max: 4096 })

/** A glob in the folded form of the paths it is matched against. */
export function foldGlob (path: string): string {
  const trimmed = path.toLowerCase().replace(/\/+$/, '')
  return trimmed === '' ? '/' : trimmed
}

export function compilePathRule (globs: string[]): PathRule {
  const key = JSON.stringify(globs)
  let rule = compiled.get(key)
  if (rule === undefined) {
    rule = compileNow(globs)
    compiled.set(key, rule)
  }
  return rule
}

function compileNow (globs: string[]): PathRule {
  // `/payouts/**` also matches `/payouts` (SPEC). picomatch 4 does that for `/payouts/**` itself but
  // not for `/payouts/*/**` against `/payouts/1`: its `**` then needs the slash before it.
  const patterns = globs.flatMap((glob) => {
    const g = foldGlob(glob)
    return g.endsWith('/**') ? [g, g.slice(0, -3) === '' ? '/' : g.slice(0, -3)] : [g]
  })
  const match = picomatch(patterns, { dot: true, noextglob: true, nobrace: true })
  return (path) => match(path)
}
