/**
 * A JSON reader for the bodies the proxy judges (idempotency reference, amounts: SPEC §7–§8) that
 * notices what JSON.parse hides: a member name repeated in one object. JSON.parse keeps the last,
 * the provider's parser may keep the first, so a value read through a repeated name is ambiguous.
 * `__proto__` is an ordinary own member, as JSON.parse makes it; nesting is bounded.
 * Pure: text in, value or reason out (bytes are read once per reading mode).
 *
 * Numbers as values are read by JSON.parse, V8's own parser, between two checks: a scan of the
 * text first counts its member names and gives up past the nesting bound (JSON.parse would build
 * any depth, at any cost, before a check after it could refuse it), then every name counted must
 * be a key of the value (a repeated name would have been folded into one). A text that fails a
 * check, or JSON.parse, is read token by token, which says exactly where the repetition is or why
 * the text is refused: such a text costs both readings, still in time linear in its length.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [name: string]: JsonValue }

export type StrictJson =
  | { ok: true, value: JsonValue, /** Whether any object anywhere repeats a member name. */ hasDuplicates: boolean }
  | { ok: false, reason: 'syntax' | 'too-deep', /** Offset in the text where reading stopped, when known. */ at?: number }

export type PointerRead =
  | { kind: 'found', value: JsonValue }
  | { kind: 'missing' }
  /** A member name on the way (or the last one) is repeated in its object. */
  | { kind: 'ambiguous' }

/** Deeper nesting than this is refused rather than risking the stack. */
export const MAX_JSON_DEPTH = 256

const duplicatesOf = new WeakMap<object, Set<string>>()

class JsonSyntaxError extends Error {
  constructor (readonly reason: 'syntax' | 'too-deep') { super(reason) }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
// RFC 8259 §7: control characters must be escaped inside strings. Unrolled (runs of plain
// characters, then one escape): a third of the time of one alternation per character.
// eslint-disable-next-line no-control-regex
const STRING = /"[^"\\\u0000-\u001f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\u0000-\u001f]*)*"/y
const WHITESPACE = /[ \t\n\r]*/y

export interface StrictJsonOptions {
  /** 'text' returns every number as its exact source text (amounts: `1e400` and `-5` stay visible). */
  numbers?: 'value' | 'text'
}

export function parseStrictJson (text: string, options: StrictJsonOptions = {}): StrictJson {
  const numberAsText = options.numbers === 'text'
  if (!numberAsText) {
    const read = readWithJsonParse(text)
    if (read !== null) return read
  }
  let at = 0
  let hasDuplicates = false

  const skip = (): void => {
    WHITESPACE.lastIndex = at
    WHITESPACE.test(text)
    at = WHITESPACE.lastIndex
  }
  const fail = (): never => { throw new JsonSyntaxError('syntax') }
  /** Moves past the token `pattern` matches here; returns where it started. */
  const token = (pattern: RegExp): number => {
    const start = at
    pattern.lastIndex = at
    if (!pattern.test(text)) fail()
    at = pattern.lastIndex
    return start
  }
  // Most strings hold no escape: sliced, not handed to JSON.parse one by one.
  const stringToken = (): string => {
    const raw = text.slice(token(STRING), at)
    return raw.includes('\\') ? JSON.parse(raw) as string : raw.slice(1, -1)
  }
  const literal = (word: string, value: JsonValue): JsonValue => {
    if (!text.startsWith(word, at)) fail()
    at += word.length
    return value
  }
  const value = (depth: number): JsonValue => {
    if (depth > MAX_JSON_DEPTH) throw new JsonSyntaxError('too-deep')
    skip()
    switch (text[at]) {
      case '{': return object(depth)
      case '[': return array(depth)
      case '"': return stringToken()
      case 't': return literal('true', true)
      case 'f': return literal('false', false)
      case 'n': return literal('null', null)
      default: {
        const number = text.slice(token(NUMBER), at)
        return numberAsText ? number : Number(number)
      }
    }
  }
  const object = (depth: number): JsonValue => {
    // An ordinary object keeps V8's fast properties (one made by Object.create(null) is a
    // dictionary); `__proto__` is defined as an own member below instead of setting the prototype.
    const result: Record<string, JsonValue> = {}
    at++
    skip()
    if (text[at] === '}') { at++; return result }
    for (;;) {
      skip()
      const name = stringToken()
      skip()
      if (text[at] !== ':') fail()
      at++
      const member = value(depth + 1)
      if (Object.hasOwn(result, name)) {
        hasDuplicates = true
        const names = duplicatesOf.get(result) ?? new Set<string>()
        names.add(name)
        duplicatesOf.set(result, names)
      }
      // Stryker disable next-line ConditionalExpression: for any other name defineProperty makes the member an
      // assignment makes, only slower
      if (name === '__proto__') Object.defineProperty(result, name, { value: member, enumerable: true, writable: true, configurable: true })
      else result[name] = member
      skip()
      if (text[at] === ',') { at++; continue }
      if (text[at] === '}') { at++; return result }
      fail()
    }
  }
  const array = (depth: number): JsonValue => {
    const result: JsonValue[] = []
    at++
    skip()
    if (text[at] === ']') { at++; return result }
    for (;;) {
      result.push(value(depth + 1))
      skip()
      if (text[at] === ',') { at++; continue }
      if (text[at] === ']') { at++; return result }
      fail()
    }
  }

  try {
    const parsed = value(0)
    skip()
    if (at !== text.length) fail()
    return { ok: true, value: parsed, hasDuplicates }
  } catch (err) {
    if (err instanceof JsonSyntaxError) return { ok: false, reason: err.reason, at }
    throw err
  }
}

/**
 * JSON.parse's reading when it is the strict one (no repeated name, nesting in bounds); else null.
 * Exported for its table test: declining a text it could take is not wrong, only twice the work,
 * so no reading of parseStrictJson shows it.
 */
export function readWithJsonParse (text: string): StrictJson | null {
  const names = countMemberNames(text)
  if (names < 0) return null
  let value: JsonValue
  try {
    value = JSON.parse(text) as JsonValue
  } catch {
    return null
  }
  return countKeys(value, 0) === names ? { ok: true, value, hasDuplicates: false } : null
}

/** Keys of every object in the value; -1 for a value deeper than the token reader allows. */
function countKeys (value: JsonValue, depth: number): number {
  if (depth > MAX_JSON_DEPTH) return -1
  if (value === null || typeof value !== 'object') return 0
  let count = 0
  if (Array.isArray(value)) {
    for (const item of value) {
      const inner = countKeys(item, depth + 1)
      if (inner < 0) return -1
      count += inner
    }
    return count
  }
  // for-in rather than Object.values: no array per object. An enumerable name someone added to
  // Object.prototype would be counted too, and the text would only go to the token reader.
  for (const name in value) {
    const inner = countKeys(value[name] as JsonValue, depth + 1)
    if (inner < 0) return -1
    count += inner + 1
  }
  return count
}

/**
 * The member names in a text (the strings followed by `:`), or -1 for an unterminated string or
 * more open brackets at once than the token reader allows (one more than MAX_JSON_DEPTH: the
 * innermost may be empty). Strings are skipped with indexOf, so a long one costs a native search
 * rather than a character loop; the characters between strings are walked for the brackets.
 */
function countMemberNames (text: string): number {
  let count = 0
  let open = 0
  let at = 0
  for (;;) {
    const start = text.indexOf('"', at)
    const stop = start === -1 ? text.length : start
    for (let i = at; i < stop; i++) {
      const code = text.charCodeAt(i)
      if (code === 0x5b || code === 0x7b) {
        if (++open > MAX_JSON_DEPTH + 1) return -1
      } else if (code === 0x5d || code === 0x7d) {
        open--
      }
    }
    if (start === -1) return count
    let end = text.indexOf('"', start + 1)
    while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1)
    if (end === -1) return -1
    at = end + 1
    while (isWhitespace(text.charCodeAt(at))) at++
    if (text.charCodeAt(at) === 0x3a) count++
  }
}

/** Whether the quote at `at` is preceded by an odd run of backslashes. */
function escaped (text: string, at: number): boolean {
  let backslashes = 0
  while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++
  return backslashes % 2 === 1
}

function isWhitespace (code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09
}

/** Reads bytes as UTF-8 JSON; invalid UTF-8 is a syntax problem, not a replacement character. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

export function parseStrictJsonBytes (bytes: Buffer, options: StrictJsonOptions = {}): StrictJson {
  let text: string
  try {
    text = UTF8.decode(bytes)
  } catch {
    return { ok: false, reason: 'syntax' }
  }
  return parseStrictJson(text, options)
}

/** RFC 6901 JSON Pointer syntax: '' (the whole document) or `/`-led segments with `~0`/`~1` escapes. */
export const JSON_POINTER_PATTERN = '^(/([^~]|~[01])*)*$'

/**
 * RFC 6901 JSON Pointer over a value from parseStrictJson. An array index is a decimal without
 * leading zeros; `-` (past the end) is never a value.
 */
export function readPointer (root: JsonValue, pointer: string): PointerRead {
  if (pointer === '') return { kind: 'found', value: root }
  if (!pointer.startsWith('/')) return { kind: 'missing' }
  let current: JsonValue = root
  for (const raw of pointer.slice(1).split('/')) {
    const name = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(name)) return { kind: 'missing' }
      const item: JsonValue | undefined = current[Number(name)]
      if (item === undefined) return { kind: 'missing' }
      current = item
    } else if (current !== null && typeof current === 'object') {
      if (duplicatesOf.get(current)?.has(name) === true) return { kind: 'ambiguous' }
      if (!Object.hasOwn(current, name)) return { kind: 'missing' }
      current = current[name] as JsonValue
    } else {
      return { kind: 'missing' }
    }
  }
  return { kind: 'found', value: current }
}
