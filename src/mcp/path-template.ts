/**
 * An operator tool's path (SPEC §13): `/transactions/{transactionId}` below the interface base.
 * Each `{name}` is a whole segment, filled by one argument that must be exactly one canonical
 * segment (SPEC §3): read by the same reader as every request path, and refused unless that reading
 * is the argument itself, so `..`, `a/b`, `x;y`, `%2F` or `%41` never become part of a path. Also
 * whether an allow rule's globs could admit some filling of the template, for the tool listing.
 */
import picomatch from 'picomatch'
import { foldGlob } from '../callers/path-rules.js'
import { McpInvalidArgumentsError } from '../errors.js'
import { isTokenEndpointPath, readRestPath, type PathOptions } from '../routing/canonical-path.js'

export type Segment = { literal: string } | { placeholder: string }

export interface PathTemplate {
  segments: readonly Segment[]
  /** Kept as written (SPEC §3 forwards a trailing slash as sent). */
  trailingSlash: boolean
  placeholders: readonly string[]
}

const PLACEHOLDER = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/

export type TemplateRead = { ok: true, template: PathTemplate } | { ok: false, problem: string }

export function parseTemplate (text: string, options: PathOptions): TemplateRead {
  if (!text.startsWith('/')) return { ok: false, problem: 'must start with "/"' }
  const trailingSlash = text.length > 1 && text.endsWith('/')
  const parts = text === '/' ? [] : text.slice(1, trailingSlash ? -1 : undefined).split('/')
  const segments: Segment[] = []
  const placeholders: string[] = []
  for (const part of parts) {
    const name = PLACEHOLDER.exec(part)?.[1]
    if (name !== undefined) {
      if (placeholders.includes(name)) return { ok: false, problem: `{${name}} appears twice` }
      placeholders.push(name)
      segments.push({ placeholder: name })
      continue
    }
    if (part.includes('{') || part.includes('}')) return { ok: false, problem: `"${part}": a placeholder must be a whole segment, {name} with a name of letters, digits and _` }
    if (!isOneSegment(part, options)) return { ok: false, problem: `"${part}" is not a canonical path segment (A-Z a-z 0-9 - _, SPEC §3)` }
    segments.push({ literal: part })
  }
  const sample = readRestPath(`/${segments.map((s) => 'literal' in s ? s.literal : 'x').join('/')}`, options)
  if (sample.ok && isTokenEndpointPath(sample.folded)) return { ok: false, problem: 'names the provider\'s token endpoint, which is never forwarded' }
  return { ok: true, template: { segments, trailingSlash, placeholders } }
}

/**
 * The path with every placeholder filled, or the refusal naming the first argument that is not one canonical segment.
 */
export function fillTemplate (
  template: PathTemplate,
  args: Readonly<Record<string, unknown>>,
  options: PathOptions,
): string | McpInvalidArgumentsError {
  let path = ''
  for (const segment of template.segments) {
    if ('literal' in segment) {
      path += `/${segment.literal}`
      continue
    }
    const value = args[segment.placeholder]
    if (typeof value !== 'string' || !isOneSegment(value, options)) {
      return new McpInvalidArgumentsError(`arguments.${segment.placeholder}`, `must be one canonical path segment (A-Z a-z 0-9 - _${options.allowDots ? ' and inner dots' : ''}), with nothing encoded`)
    }
    path += `/${value}`
  }
  return template.trailingSlash ? `${path}/` : path
}

/** SPEC §3's reader admits it as one segment, unchanged (nothing decoded, no separator). */
function isOneSegment (value: string, options: PathOptions): boolean {
  if (value === '' || value.includes('/')) return false
  const reading = readRestPath(`/${value}`, options)
  return reading.ok && reading.path === `/${value}`
}

/**
 * Whether some filling of the template could match one of the globs (matched as path-rules.ts
 * matches them: folded, `*` one segment, `**` zero or more). A placeholder can take any one segment,
 * so it is taken to match any glob segment but `**`'s zero: the listing may show a tool a rule admits
 * for some values only; the call itself meets the real rule.
 */
export function couldMatch (template: PathTemplate, globs: readonly string[]): boolean {
  const folded: Segment[] = template.segments.map((s) => 'literal' in s ? { literal: s.literal.toLowerCase() } : s)
  return globs.some((glob) => {
    const g = foldGlob(glob)
    return matchFrom(folded, 0, g === '/' ? [] : g.slice(1).split('/'), 0)
  })
}

function matchFrom (path: readonly Segment[], i: number, glob: readonly string[], j: number): boolean {
  if (j === glob.length) return i === path.length
  const pattern = glob[j] as string
  if (pattern === '**') return matchFrom(path, i, glob, j + 1) || (i < path.length && matchFrom(path, i + 1, glob, j))
  const segment = path[i]
  if (segment === undefined) return false
  const admits = 'placeholder' in segment || picomatch.isMatch(segment.literal, pattern, { dot: true, noextglob: true, nobrace: true })
  return admits && matchFrom(path, i + 1, glob, j + 1)
}
