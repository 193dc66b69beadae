/**
 * The callers file (SPEC §7): read once through one file descriptor, parsed as JSON or YAML, and
 * validated into typed callers. Every problem is reported with its field path in the SPEC's form
 * (`callers[1].allow[0].methods[0]: ...`) so an operator can fix the file in one pass; a file with
 * any problem yields no callers at all (start stops, reload keeps the old ones).
 */
import { BlockList } from 'node:net'
import { openSync, fstatSync, readSync, closeSync } from 'node:fs'
import { extname } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { parseCidr, type Cidr } from '../config/network-lists.js'
import { compilePathRule, type PathRule } from './path-rules.js'

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
export const ENVIRONMENT_NAMES = ['sandbox', 'production'] as const
export const INTERFACE_NAMES = ['fiat', 'crypto'] as const
/** A callers file of 1,000 callers with 10 rules each is well below this. */
export const MAX_CALLERS_FILE_BYTES = 4 * 1024 * 1024
const ID = /^[a-z0-9][a-z0-9._-]{0,63}$/
const SHA256 = /^[0-9a-f]{64}$/i
const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/
const POINTER = /^(\/([^~]|~[01])*)*$/u

export interface AllowRule {
  environments: ReadonlySet<string>
  interfaces: ReadonlySet<string>
  methods: ReadonlySet<string>
  /** Null means every path. */
  paths: PathRule | null
}

export interface AmountLimit {
  paths: PathRule | null
  amount: string
  currency: string
  /** Plain decimal text by currency. */
  perRequest: ReadonlyMap<string, string>
  perDay: ReadonlyMap<string, string>
}

export interface CallerSpec {
  id: string
  /** Lower-case hex. */
  keySha256: string | null
  sources: Cidr[] | null
  allow: AllowRule[]
  rateLimit: { requests: number, perSeconds: number } | null
  requireExternalReference: boolean
  amountLimits: AmountLimit[]
}

export type CallersLoad = { ok: true, callers: CallerSpec[] } | { ok: false, problems: string[] }

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Reads the file through one descriptor, so a symlink swapped mid-read cannot mix two files. */
export function readCallersFile (file: string): CallersLoad {
  let text: string
  let fd: number | null = null
  try {
    fd = openSync(file, 'r')
    const size = fstatSync(fd).size
    if (size > MAX_CALLERS_FILE_BYTES) return { ok: false, problems: [`${file}: larger than ${MAX_CALLERS_FILE_BYTES} bytes`] }
    const bytes = Buffer.alloc(size)
    let read = 0
    while (read < size) {
      const n = readSync(fd, bytes, read, size - read, read)
      if (n === 0) break
      read += n
    }
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, read))
  } catch (error) {
    const reason = error instanceof TypeError ? 'not valid UTF-8' : 'cannot be read'
    return { ok: false, problems: [`${file}: ${reason}`] }
  } finally {
    if (fd !== null) closeSync(fd)
  }
  const load = parseCallersText(text, extname(file).toLowerCase())
  return load.ok ? load : { ok: false, problems: load.problems.map((p) => `${file}: ${p}`) }
}

export function parseCallersText (text: string, extension: string): CallersLoad {
  let document: unknown
  try {
    if (extension === '.json') document = JSON.parse(text)
    else if (extension === '.yaml' || extension === '.yml') document = parseYaml(text, { maxAliasCount: 100, uniqueKeys: true })
    else return { ok: false, problems: ['the file name must end in .json, .yaml or .yml'] }
  } catch {
    return { ok: false, problems: [`not valid ${extension === '.json' ? 'JSON' : 'YAML'}`] }
  }
  return validateCallers(document)
}

export function validateCallers (document: unknown): CallersLoad {
  const problems: string[] = []
  const report = (path: string, message: string): void => { problems.push(`${path}: ${message}`) }
  if (!isObj(document) || !Array.isArray(document.callers)) return { ok: false, problems: ['callers: must be a list'] }
  const callers: CallerSpec[] = []
  const ids = new Set<string>()
  document.callers.forEach((entry: unknown, index) => {
    const at = `callers[${index}]`
    if (!isObj(entry)) { report(at, 'must be an object'); return }
    unknownFields(entry, ['id', 'keySha256', 'sources', 'allow', 'rateLimit', 'requireExternalReference', 'amountLimits'], at, report)
    const id = entry.id
    if (typeof id !== 'string' || !ID.test(id)) report(`${at}.id`, 'must match [a-z0-9][a-z0-9._-]{0,63}')
    else if (ids.has(id)) report(`${at}.id`, `"${id}" is not unique`)
    else ids.add(id)
    let keySha256: string | null = null
    if (entry.keySha256 !== undefined) {
      if (typeof entry.keySha256 !== 'string' || !SHA256.test(entry.keySha256)) report(`${at}.keySha256`, 'must be 64 hexadecimal digits')
      else keySha256 = entry.keySha256.toLowerCase()
    }
    let sources: Cidr[] | null = null
    if (entry.sources !== undefined) {
      sources = []
      const list = listOf(entry.sources, `${at}.sources`, report)
      list.forEach((s, i) => {
        const cidr = typeof s === 'string' ? parseCidr(s.trim()) : null
        if (cidr === null) report(`${at}.sources[${i}]`, 'must be an IP address or CIDR')
        else sources?.push(cidr)
      })
    }
    if (entry.keySha256 === undefined && entry.sources === undefined) report(at, 'needs keySha256, sources or both')
    const allow = listOf(entry.allow, `${at}.allow`, report).map((r, i) => allowRule(r, `${at}.allow[${i}]`, report))
    let rateLimit: CallerSpec['rateLimit'] = null
    if (entry.rateLimit !== undefined) {
      const r = entry.rateLimit
      if (!isObj(r)) report(`${at}.rateLimit`, 'must be an object')
      else {
        unknownFields(r, ['requests', 'perSeconds'], `${at}.rateLimit`, report)
        const ok = positiveInt(r.requests, `${at}.rateLimit.requests`, report) && positiveInt(r.perSeconds, `${at}.rateLimit.perSeconds`, report)
        if (ok) rateLimit = { requests: r.requests as number, perSeconds: r.perSeconds as number }
      }
    }
    const rer = entry.requireExternalReference
    if (rer !== undefined && typeof rer !== 'boolean') report(`${at}.requireExternalReference`, 'must be true or false')
    const amountLimits = entry.amountLimits === undefined
      ? []
      : listOf(entry.amountLimits, `${at}.amountLimits`, report).map((l, i) => amountLimit(l, `${at}.amountLimits[${i}]`, report))
    callers.push({
      id: typeof id === 'string' ? id : '',
      keySha256,
      sources,
      allow: allow.filter((r): r is AllowRule => r !== null),
      rateLimit,
      requireExternalReference: rer === true,
      amountLimits: amountLimits.filter((l): l is AmountLimit => l !== null),
    })
  })
  checkKeylessOverlap(callers, report)
  return problems.length > 0 ? { ok: false, problems } : { ok: true, callers }
}

type Report = (path: string, message: string) => void

function unknownFields (object: Obj, known: string[], at: string, report: Report): void {
  for (const name of Object.keys(object)) if (!known.includes(name)) report(`${at}.${name}`, 'is not a known field')
}

function listOf (value: unknown, at: string, report: Report): unknown[] {
  if (Array.isArray(value)) return value
  report(at, 'must be a list')
  return []
}

function positiveInt (value: unknown, at: string, report: Report): boolean {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return true
  report(at, 'must be a positive integer')
  return false
}

function enumSet (value: unknown, allowed: readonly string[], at: string, what: string, report: Report): Set<string> {
  if (value === undefined) return new Set(allowed)
  const set = new Set<string>()
  listOf(value, at, report).forEach((v, i) => {
    if (typeof v === 'string' && allowed.includes(v)) set.add(v)
    else report(`${at}[${i}]`, `${JSON.stringify(v)} is not ${what}`)
  })
  return set
}

function pathsOf (value: unknown, at: string, report: Report): PathRule | null {
  if (value === undefined) return null
  const globs: string[] = []
  listOf(value, at, report).forEach((g, i) => {
    if (typeof g !== 'string' || !g.startsWith('/')) report(`${at}[${i}]`, 'must be a path glob starting with "/"')
    else globs.push(g)
  })
  return compilePathRule(globs)
}

function allowRule (value: unknown, at: string, report: Report): AllowRule | null {
  if (!isObj(value)) { report(at, 'must be an object'); return null }
  unknownFields(value, ['environments', 'interfaces', 'methods', 'paths'], at, report)
  return {
    environments: enumSet(value.environments, ENVIRONMENT_NAMES, `${at}.environments`, 'an environment (sandbox, production)', report),
    interfaces: enumSet(value.interfaces, INTERFACE_NAMES, `${at}.interfaces`, 'an interface (fiat, crypto)', report),
    methods: enumSet(value.methods, METHODS, `${at}.methods`, 'an HTTP method', report),
    paths: pathsOf(value.paths, `${at}.paths`, report),
  }
}

function decimalMap (value: unknown, at: string, report: Report): Map<string, string> {
  const map = new Map<string, string>()
  if (value === undefined) return map
  if (!isObj(value)) { report(at, 'must map currency codes to amounts'); return map }
  for (const [currency, amount] of Object.entries(value)) {
    const text = typeof amount === 'number' && Number.isFinite(amount) ? String(amount) : amount
    if (typeof text !== 'string' || !PLAIN_DECIMAL.test(text)) report(`${at}.${currency}`, 'must be a plain decimal (a number or a string like "500.00")')
    else map.set(currency, text)
  }
  return map
}

function amountLimit (value: unknown, at: string, report: Report): AmountLimit | null {
  if (!isObj(value)) { report(at, 'must be an object'); return null }
  unknownFields(value, ['paths', 'amount', 'currency', 'perRequest', 'perDay'], at, report)
  for (const field of ['amount', 'currency'] as const) {
    const p = value[field]
    if (typeof p !== 'string' || !POINTER.test(p)) report(`${at}.${field}`, 'must be a JSON Pointer (RFC 6901)')
  }
  return {
    paths: pathsOf(value.paths, `${at}.paths`, report),
    amount: String(value.amount),
    currency: String(value.currency),
    perRequest: decimalMap(value.perRequest, `${at}.perRequest`, report),
    perDay: decimalMap(value.perDay, `${at}.perDay`, report),
  }
}

function checkKeylessOverlap (callers: CallerSpec[], report: Report): void {
  const keyless = callers.map((c, i) => ({ c, i })).filter(({ c }) => c.keySha256 === null && c.sources !== null)
  for (let a = 0; a < keyless.length; a++) {
    for (let b = a + 1; b < keyless.length; b++) {
      const x = keyless[a]
      const y = keyless[b]
      if (x === undefined || y === undefined) continue
      const overlap = (x.c.sources ?? []).some((s) => (y.c.sources ?? []).some((r) => cidrsOverlap(s, r)))
      if (overlap) report(`callers[${y.i}].sources`, `overlaps the sources of key-less caller callers[${x.i}]`)
    }
  }
}

/** Two CIDRs overlap when the shorter prefix contains the other's network address. */
function cidrsOverlap (a: Cidr, b: Cidr): boolean {
  if (a.family !== b.family) return false
  const [wide, narrow] = a.prefix <= b.prefix ? [a, b] : [b, a]
  const list = new BlockList()
  list.addSubnet(wide.address, wide.prefix, wide.family)
  return list.check(narrow.address, narrow.family)
}
