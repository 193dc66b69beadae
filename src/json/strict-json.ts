/**
 * A JSON reader for the bodies the proxy judges (idempotency reference, amounts: SPEC §7–§8) that
 * notices what JSON.parse hides: a member name repeated in one object. JSON.parse keeps the last,
 * the provider's parser may keep the first, so a value read through a repeated name is ambiguous.
 * `__proto__` is an ordinary own member, as JSON.parse makes it; nesting is bounded.
 * Pure: text in, value or reason out (bytes are read once per reading mode).
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [name: string]: JsonValue }

export type StrictJson =
  | { ok: true, value: JsonValue, /** Whether any object anywhere repeats a member name. */ hasDuplicates: boolean }
  | { ok: false, reason: 'syntax' | 'too-deep' }

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
      if (text[at] !== '"') fail()
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
    if (err instanceof JsonSyntaxError) return { ok: false, reason: err.reason }
    throw err
  }
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
