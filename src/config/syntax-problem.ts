/**
 * A callers or tools file that does not parse, said with where: `line 4, column 1`, so an operator can go
 * to the spot. The parsers' own messages are not passed on whole: YAML's quotes the lines around
 * the error, and V8's JSON messages quote the text.
 */
import { MAX_JSON_DEPTH } from '../json/strict-json.js'

const MAX_REASON_CHARS = 160

export function jsonSyntaxProblem (text: string, reason: 'syntax' | 'too-deep', at: number | undefined): string {
  if (reason === 'too-deep') return `not valid JSON: nested deeper than ${MAX_JSON_DEPTH} levels`
  if (at === undefined) return 'not valid JSON'
  if (at >= text.length) return 'not valid JSON: the text ends too early'
  const { line, column } = position(text, at)
  return `not valid JSON at line ${line}, column ${column}`
}

/** For what the yaml package throws: YAMLParseError carries `linePos`; others (the alias cap) only a message. */
export function yamlSyntaxProblem (err: unknown): string {
  const linePos = (err as { linePos?: Array<{ line: number, col: number }> }).linePos
  const message = err instanceof Error ? err.message.split('\n')[0] ?? '' : ''
  // "… at line 4, column 1:": the position is said once, from linePos.
  const reason = message.replace(/ at line \d+, column \d+:?$/, '').slice(0, MAX_REASON_CHARS)
  const start = linePos?.[0]
  const where = start === undefined ? '' : ` at line ${start.line}, column ${start.col}`
  return `not valid YAML${where}${reason === '' ? '' : `: ${reason}`}`
}

function position (text: string, offset: number): { line: number, column: number } {
  let line = 1
  let lineStart = 0
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  return { line, column: offset - lineStart + 1 }
}
