/**
 * The one reading of an /mcp request body (SPEC §13, "One reading"). The bytes are read once,
 * here, as UTF-8 JSON (RFC 8259 §8.1) and handed to the SDK parsed, so the SDK never reads them:
 * its own reading (`Request.text()`) strips a byte-order mark and replaces invalid UTF-8, and so
 * it served a batch this endpoint had refused to parse. Here a BOM is a character JSON does not
 * allow before a value, invalid UTF-8 is a parse error, and what is not one JSON object is a parse
 * error, or the batch refusal when it is an array.
 *
 * A tool call's `body` argument is also kept as the bytes it stood as in the envelope: the inner
 * request sends those, as the agent wrote them, and nothing serialises the parsed value again
 * (JSON.stringify overflowed the stack on a body 5,000 levels deep, a 500 where HTTP answers
 * AMOUNT_UNREADABLE, and it would spell an amount `1e3` as `1000`). The scan that finds them is a
 * loop, not a recursion, so no depth the body limit admits reaches the stack.
 */

export type EnvelopeReading =
  | { kind: 'message', message: Record<string, unknown>, /** `params.arguments.body` of a tools/call; null without one. */ toolBody: Buffer | null }
  | { kind: 'batch' }
  | { kind: 'parse-error' }

/** `ignoreBOM: true` keeps a BOM in the text, where JSON.parse refuses it. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

const TOOL_BODY = ['params', 'arguments', 'body'] as const
const WHITESPACE = /[ \t\n\r]*/y
/** A number or a literal: the scan starts on a value JSON.parse accepted. */
const SCALAR = /[\w.+-]*/y
/** Up to the next string or bracket. */
const PLAIN = /[^"[\]{}]*/y

export function readEnvelope (bytes: Buffer): EnvelopeReading {
  let text: string
  let message: unknown
  try {
    text = UTF8.decode(bytes)
    message = JSON.parse(text)
  } catch {
    return { kind: 'parse-error' }
  }
  if (Array.isArray(message)) return { kind: 'batch' }
  if (typeof message !== 'object' || message === null) return { kind: 'parse-error' }
  const record = message as Record<string, unknown>
  const span = record['method'] === 'tools/call' ? memberSpan(text, TOOL_BODY) : null
  return { kind: 'message', message: record, toolBody: span === null ? null : Buffer.from(text.slice(span[0], span[1])) }
}

/**
 * Where the value at `names` (a member of a member of ...) stands in a text JSON.parse accepted,
 * as JSON.parse reads it: of a repeated name, the last. Null when an object on the way lacks it.
 */
function memberSpan (text: string, names: readonly string[]): [number, number] | null {
  let found: [number, number] | null = null
  let start = skip(WHITESPACE, text, 0)
  for (const name of names) {
    if (text.charCodeAt(start) !== 0x7b) return null
    found = null
    let at = skip(WHITESPACE, text, start + 1)
    while (text.charCodeAt(at) === 0x22) {
      const nameEnd = stringEnd(text, at)
      const raw = text.slice(at, nameEnd)
      const valueStart = skip(WHITESPACE, text, skip(WHITESPACE, text, nameEnd) + 1)
      const valueStop = valueEnd(text, valueStart)
      if ((raw.includes('\\') ? JSON.parse(raw) as string : raw.slice(1, -1)) === name) found = [valueStart, valueStop]
      at = skip(WHITESPACE, text, valueStop)
      if (text.charCodeAt(at) === 0x2c) at = skip(WHITESPACE, text, at + 1)
    }
    if (found === null) return null
    start = found[0]
  }
  return found
}

function valueEnd (text: string, at: number): number {
  const first = text.charCodeAt(at)
  if (first === 0x22) return stringEnd(text, at)
  if (first !== 0x5b && first !== 0x7b) return skip(SCALAR, text, at)
  let open = 0
  let i = at
  for (;;) {
    const code = text.charCodeAt(i)
    if (code === 0x22) {
      i = stringEnd(text, i)
    } else {
      if (code === 0x5b || code === 0x7b) open++
      else if (--open === 0) return i + 1
      i++
    }
    i = skip(PLAIN, text, i)
  }
}

/** Past the closing quote of the string opening at `at`. */
function stringEnd (text: string, at: number): number {
  let end = text.indexOf('"', at + 1)
  while (escaped(text, end)) end = text.indexOf('"', end + 1)
  return end + 1
}

/** Whether the quote at `at` is preceded by an odd run of backslashes. */
function escaped (text: string, at: number): boolean {
  let backslashes = 0
  while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++
  return backslashes % 2 === 1
}

function skip (pattern: RegExp, text: string, at: number): number {
  pattern.lastIndex = at
  pattern.test(text)
  return pattern.lastIndex
}
