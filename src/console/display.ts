/**
 * How the console spells what it shows (pure, table-tested): amounts grouped without ever becoming
 * a float, times as UTC text with their ISO form for the browser to localise, what callers chose
 * with controls, bidi and zero-width characters spelled out (text/terminal-safe.ts: a page must not
 * show a person something else than what is sent) and cut to a length, and a held body
 * pretty-printed only when that shows exactly the value that is sent. Escaping for HTML is the
 * template engine's, never done here.
 */
import { parseStrictJson, type JsonValue } from '../json/strict-json.js'
import { terminalJson, terminalText } from '../text/terminal-safe.js'

/** `50000.25` -> `50,000.25`: a plain decimal (SPEC §7) grouped by its digits, never through Number. */
export function groupedAmount (amount: string): string {
  const [whole = '', fraction] = amount.split('.')
  if (!/^\d+$/.test(whole)) return amount
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return fraction === undefined ? grouped : `${grouped}.${fraction}`
}

export interface ShownTime { iso: string, utc: string }

/** `iso` goes in `datetime` for the browser's time zone, `utc` is the text without script and the title. */
export function shownTime (ms: number): ShownTime {
  const iso = new Date(ms).toISOString()
  return { iso, utc: `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` }
}

/** `3 min`, `2 h 5 min`, `1 d 4 h`: how long ago or how long until, in whole units. */
export function span (ms: number): string {
  const minutes = Math.floor(Math.abs(ms) / 60_000)
  if (minutes < 1) return 'less than a minute'
  if (minutes < 60) return `${minutes} min`
  const hours = Math.floor(minutes / 60)
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`
  return hours % 24 === 0 ? `${Math.floor(hours / 24)} d` : `${Math.floor(hours / 24)} d ${hours % 24} h`
}

export interface ShownText { text: string, cut: boolean, length: number }

/** A value a caller chose, spelled out and cut at `max` characters (the length said beside it). */
export function shownText (value: string, max: number): ShownText {
  const safe = terminalText(value)
  return safe.length <= max ? { text: safe, cut: false, length: value.length } : { text: `${safe.slice(0, max)}…`, cut: true, length: value.length }
}

export interface ShownBody { text: string, pretty: boolean }

/**
 * The held body as the person reads it: indented when it is JSON whose every member name is single
 * and every number keeps its spelling through a reading (`1e3`, `1.0` or 20 digits would not), so the
 * indented text is the same value as the bytes sent; otherwise the text as sent, spelled out.
 */
export function shownBody (text: string): ShownBody {
  const read = parseStrictJson(text)
  const spelled = parseStrictJson(text, { numbers: 'text' })
  if (read.ok &&
    spelled.ok &&
    !read.hasDuplicates &&
    numbersKept(read.value, spelled.value)) return { text: terminalJson(read.value, 2), pretty: true }
  return { text: text.split('\n').map(terminalText).join('\n'), pretty: false }
}

function numbersKept (value: JsonValue, spelled: JsonValue): boolean {
  if (typeof value === 'number') return JSON.stringify(value) === spelled
  if (Array.isArray(value)) return value.every((item, i) => numbersKept(item, (spelled as JsonValue[])[i] ?? null))
  if (value !== null && typeof value === 'object') return Object.keys(value).every((name) => numbersKept(value[name] ?? null, (spelled as Record<string, JsonValue>)[name] ?? null))
  return true
}

const STATE_WORDS: Readonly<Record<string, string>> = {
  sending: 'being sent to the provider',
  unknown: 'unknown: the provider\'s answer never came',
  pending: 'waiting for the provider',
  succeeded: 'succeeded',
  failed: 'failed',
  stale: 'stale: the provider has not said',
  unverified: 'unverified: its record failed verification',
}

/** A payment's state (SPEC §12) as a person reads it on its page (SPEC §14 "A payment's page"). */
export function stateInWords (state: string): string {
  return STATE_WORDS[state] ?? state
}
