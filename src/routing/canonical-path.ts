/**
 * The one reading of a request path (SPEC §3 "One canonical path"). A lenient provider reads
 * `payouts;x=1`, `payouts.json`, `payouts.` or `payouts%20` as `payouts` (servlet path parameters,
 * Rails and Spring suffixes, routers that trim), so a rule written for `/payouts` would not see
 * them: the proxy admits only segments that no reasonable server reads as anything else, and every
 * judge (route guard, callers, amount limits, idempotency, approvals) receives this reading, never
 * the raw URL. `CanonicalPath` is branded so that handing a judge anything else fails to compile.
 */

declare const canonical: unique symbol
/** A path below an interface base as `readRestPath` admitted it: '' (the base itself) or `/seg/…[/]`. */
export type CanonicalPath = string & { readonly [canonical]: true }

/** Why a path is refused: `traversal` could leave its base (400 INVALID_PATH), the other is 400 PATH_NOT_CANONICAL. */
export interface PathProblem {
  kind: 'traversal' | 'not-canonical'
  reason: string
  /** 1-based position of the offending segment below the route prefix. */
  segment: number
}

export type RestReading =
  | { ok: true, path: CanonicalPath, folded: CanonicalPath }
  | { ok: false, problem: PathProblem }

export interface PathOptions {
  /** PROXY_PATH_ALLOW_DOTS: dots inside a segment (`USDC.e`), never at its start or end. */
  allowDots: boolean
}

/** Canonical as sent: no decoding, no checks beyond this test (the path of almost every request). */
const PLAIN_REST = /^(?:\/[A-Za-z0-9_-]+)*\/?$/
const PLAIN_SEGMENT = /^[A-Za-z0-9_-]+$/
const DOTTED_SEGMENT = /^[A-Za-z0-9_-](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?$/
/** Percent-encodings that are decoded (SPEC §3): letters, digits, `-` and `_`. */
const DECODABLE = /%(?:4[1-9A-Fa-f]|5[0-9Aa]|6[1-9A-Fa-f]|7[0-9Aa]|3[0-9]|2[Dd]|5[Ff])/g
const PERCENT_TRIPLET = /%[0-9A-Fa-f]{2}/
/** Decodings tried when looking for a hidden dot segment or separator (`%252e%252e` takes two). */
const DECODE_ROUNDS = 3

/**
 * Reads `<rest>`, what follows a route prefix ('' or starting with '/'), without its query string.
 * Every segment is first checked for traversal anywhere in the path, then for canonical form, so a
 * path refused for both reasons gets the traversal refusal (SPEC §3's order).
 */
export function readRestPath (rest: string, options: PathOptions): RestReading {
  if (PLAIN_REST.test(rest)) {
    const path = rest as CanonicalPath
    return { ok: true, path, folded: foldPath(path) }
  }
  const segments = rest.slice(1).split('/')
  for (let i = 0; i < segments.length; i++) {
    const reason = traversalIn(segments[i] ?? '', i === segments.length - 1)
    if (reason !== null) return { ok: false, problem: { kind: 'traversal', reason, segment: i + 1 } }
  }
  const out: string[] = []
  for (let i = 0; i < segments.length; i++) {
    const raw = segments[i] ?? ''
    if (raw === '' && i === segments.length - 1) {
      out.push('')
      continue
    }
    const segment = raw.replace(DECODABLE, (triplet) => String.fromCharCode(parseInt(triplet.slice(1), 16)))
    if (!(options.allowDots ? DOTTED_SEGMENT : PLAIN_SEGMENT).test(segment)) {
      return { ok: false, problem: { kind: 'not-canonical', reason: notCanonicalReason(segment, options), segment: i + 1 } }
    }
    out.push(segment)
  }
  const path = `/${out.join('/')}` as CanonicalPath
  return { ok: true, path, folded: foldPath(path) }
}

/**
 * The form every comparison uses (SPEC §3, §7, §8): ASCII letters in lower case (a canonical path
 * holds no others) and no trailing slash; the base itself is '/'.
 */
export function foldPath (path: CanonicalPath): CanonicalPath {
  const lower = path.toLowerCase()
  const trimmed = lower.endsWith('/') ? lower.slice(0, -1) : lower
  return (trimmed === '' ? '/' : trimmed) as CanonicalPath
}

/** At most this much of a canonical path goes into a log line or a message: it may be long, and it is the client's. */
export const LOGGED_PATH_CHARS = 256

export function loggablePath (path: CanonicalPath): string {
  if (path === '') return '/'
  return path.length <= LOGGED_PATH_CHARS ? path : `${path.slice(0, LOGGED_PATH_CHARS)}…`
}

/**
 * Whether a segment could move the path out of its base on some server: a dot segment or a
 * separator in any encoding, look-alike or depth of encoding, an empty segment (`//host`), or a
 * percent-encoding that is not UTF-8 (overlong `%c0%ae` is a dot to a lenient decoder).
 */
function traversalIn (segment: string, last: boolean): string | null {
  if (segment === '') return last ? null : 'empty path segment (double slash)'
  let text = segment
  for (let round = 0; round <= DECODE_ROUNDS; round++) {
    if (text.includes('\\')) return round === 0 ? 'backslash' : 'encoded slash or backslash'
    if (round > 0 && text.includes('/')) return 'encoded slash or backslash'
    const folded = text.normalize('NFKC')
    if (folded === '.' || folded === '..') return 'dot segment'
    if (folded !== text && /[/\\]/.test(folded)) return 'look-alike slash'
    if (!PERCENT_TRIPLET.test(text)) return null
    try {
      text = decodeURIComponent(text)
    } catch {
      // Bytes that are not UTF-8 are what overlong-encoding tricks (`%c0%ae` for a dot) are made
      // of. A stray `%` beside valid triplets is only malformed: decode those as a lenient server would.
      if (/%[89A-Fa-f][0-9A-Fa-f]/.test(text)) return 'percent-encoding that is not UTF-8'
      text = text.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    }
  }
  return 'percent-encoding nested too deep'
}

function notCanonicalReason (segment: string, options: PathOptions): string {
  const rule = options.allowDots ? 'A-Z a-z 0-9 - _ and inner dots' : 'A-Z a-z 0-9 - _'
  if (options.allowDots && /^\.|\.$/.test(segment) && DOTTED_SEGMENT.test(segment.replace(/^\.+|\.+$/g, ''))) {
    return `a segment may not start or end with a dot (allowed: ${rule})`
  }
  const offending = /%[0-9A-Fa-f]{2}|[^A-Za-z0-9_-]/.exec(segment)?.[0] ?? segment
  return `${describe(offending)} is not allowed in a path segment (allowed: ${rule})`
}

/** The offending character as an operator can read it, never more than a few bytes of client input. */
function describe (token: string): string {
  if (token.length === 3 && token.startsWith('%')) return `the percent-encoding ${token.toUpperCase()}`
  const code = token.codePointAt(0) ?? 0
  if (code > 0x20 && code < 0x7f) return `'${token}'`
  return `the character U+${code.toString(16).toUpperCase().padStart(4, '0')}`
}

/** The last segment of the provider's token path, `{fiat base}/auth/generate-bearer-token` (SPEC §1). */
const TOKEN_SEGMENT = 'generate-bearer-token'

/**
 * True when a canonical path could name the provider's token endpoint: a segment starting with its
 * last segment in any case, wherever it stands (a suffix such as `.json` under
 * PROXY_PATH_ALLOW_DOTS, extra segments around it). No payments API path has such a segment for
 * any other reason, so refusing them all is free.
 */
export function isTokenEndpointPath (folded: CanonicalPath): boolean {
  return folded.includes(`/${TOKEN_SEGMENT}`)
}
