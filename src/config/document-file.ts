/**
 * An operator's file of rules (the callers file, SPEC §7; the MCP tools file, SPEC §13) read once
 * through one file descriptor, bounded, as UTF-8, then parsed by its extension: strict JSON (a
 * repeated member name is refused, not silently resolved) or YAML (unique keys, aliases capped).
 * Every problem is one line naming the file, or the variable when the file cannot be read.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { extname } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { jsonSyntaxProblem, yamlSyntaxProblem } from './syntax-problem.js'
import { parseStrictJson } from '../json/strict-json.js'

export type DocumentRead = { ok: true, document: unknown } | { ok: false, problems: string[] }

/** Reads the file through one descriptor, so a symlink swapped mid-read cannot mix two files. */
export function readDocumentFile (file: string, variable: string, maxBytes: number): DocumentRead {
  let text: string
  let fd: number | null = null
  try {
    fd = openSync(file, 'r')
    const size = fstatSync(fd).size
    if (size > maxBytes) return { ok: false, problems: [`${file}: larger than ${maxBytes} bytes`] }
    const bytes = Buffer.alloc(size)
    let read = 0
    while (read < size) {
      const n = readSync(fd, bytes, read, size - read, read)
      if (n === 0) break
      read += n
    }
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, read))
  } catch (error) {
    if (error instanceof TypeError) return { ok: false, problems: [`${file}: not valid UTF-8`] }
    return { ok: false, problems: [`${variable}: cannot read ${file} (${readFailure(error)})`] }
  } finally {
    if (fd !== null) closeSync(fd)
  }
  const parsed = parseDocumentText(text, extname(file).toLowerCase())
  return parsed.ok ? parsed : { ok: false, problems: parsed.problems.map((p) => `${file}: ${p}`) }
}

const READ_FAILURES: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied: the proxy\'s user cannot read it',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
}

function readFailure (error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  if (code === undefined) return 'error'
  const reason = READ_FAILURES[code]
  return reason === undefined ? code : `${code}: ${reason}`
}

export function parseDocumentText (text: string, extension: string): DocumentRead {
  try {
    if (extension === '.json') {
      // Not JSON.parse, which keeps the last of a repeated member: the rules would depend on which
      // of two lists the reader happened to keep (YAML refuses them: uniqueKeys).
      const parsed = parseStrictJson(text)
      if (!parsed.ok) return { ok: false, problems: [jsonSyntaxProblem(text, parsed.reason, parsed.at)] }
      if (parsed.hasDuplicates) return { ok: false, problems: ['not valid JSON: a member name is repeated in one object'] }
      return { ok: true, document: parsed.value }
    }
    if (extension === '.yaml' || extension === '.yml') return { ok: true, document: parseYaml(text, { maxAliasCount: 100, uniqueKeys: true }) }
    return { ok: false, problems: ['the file name must end in .json, .yaml or .yml'] }
  } catch (err) {
    return { ok: false, problems: [yamlSyntaxProblem(err)] }
  }
}
