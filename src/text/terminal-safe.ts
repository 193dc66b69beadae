/**
 * What a command prints that a caller or sender chose (references, event ids, reasons, bodies), made
 * safe for a person's terminal: a reference holding `\e[49G` must not move the cursor over the
 * amount, a bare CR must not forge a row, a bidi override or a zero-width character must not make
 * two different references look the same. Control, format and separator characters (and lone
 * surrogates) are written as escapes; a backslash too, so an escape typed in the text is never
 * mistaken for one of ours. The person sees exactly what will be sent, spelled out.
 */

/**
 * C0 and C1 controls, DEL, format characters (bidi controls, zero-width), line/paragraph separators, lone surrogates.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\\]/gu
/**
 * Within JSON.stringify's output: what it leaves raw that a terminal would act on. It escapes every
 * C0 control inside strings itself, so a raw newline there is the indentation's own.
 */
const UNSAFE_IN_JSON = /[^\P{Cc}\n]|[\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu

const SHORT: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' }

function codeEscape (char: string): string {
  const code = char.codePointAt(0) ?? 0
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`
  return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`
}

/** One value for a line of text output (a table cell, a message). */
export function terminalText (text: string): string {
  return text.replace(UNSAFE, (char) => SHORT[char] ?? codeEscape(char))
}

/**
 * JSON for a terminal: the same JSON value (every escape is a JSON `\uXXXX` escape inside a string),
 * with nothing left raw that a terminal would act on or hide.
 */
export function terminalJson (value: unknown, space?: number): string {
  return (JSON.stringify(value, null, space) ?? 'null').replace(UNSAFE_IN_JSON, (char) => {
    const units: string[] = []
    for (let i = 0; i < char.length; i++) units.push(`\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`)
    return units.join('')
  })
}
