/**
 * A text as JSON with everything outside printable ASCII escaped. A control character, NEL or a
 * line separator raw in a test's report breaks the TAP stream that carries it, and the failure it
 * reports can then go unseen.
 */
export function printable (text: string): string {
  return JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
