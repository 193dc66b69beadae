/**
 * The callers file (SPEC §7): read once through one file descriptor, parsed as JSON or YAML,
 * checked against its schema (callers-schema.ts), then against what a schema cannot say, into typed
 * callers. Every problem is reported with its field path in the SPEC's form
 * (`callers[1].allow[0].methods[0]: ...`): all shape problems at once, then, once the shape is
 * right, all the others. A file with any problem yields no callers at all (start stops, reload keeps
 * the old ones).
 */
import { BlockList } from 'node:net'
import { parseDocumentText, readDocumentFile } from '../config/document-file.js'
import { parseCidr, type Cidr } from '../config/network-lists.js'
import { checkCallersSchema, ENVIRONMENT_NAMES, INTERFACE_NAMES, METHODS, type AllowRuleEntry, type AmountLimitEntry, type CallerEntry } from './callers-schema.js'
import { compilePathRule, type PathRule } from './path-rules.js'

/** A callers file of 1,000 callers with 10 rules each is well below this. */
export const MAX_CALLERS_FILE_BYTES = 4 * 1024 * 1024
const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/

export interface AllowRule {
  environments: ReadonlySet<string>
  interfaces: ReadonlySet<string>
  methods: ReadonlySet<string>
  /** Null means every path. */
  paths: PathRule | null
  /** The globs `paths` was compiled from, as written: what MCP's tool listing (SPEC §13) reads. */
  pathGlobs: readonly string[] | null
}

export interface AmountLimit {
  paths: PathRule | null
  amount: string
  currency: string
  /** Plain decimal text by currency. */
  perRequest: ReadonlyMap<string, string>
  perDay: ReadonlyMap<string, string>
  /** SPEC §11: above these a request waits for a person's decision. */
  approveAbove: ReadonlyMap<string, string>
  /** The globs `paths` was compiled from, as written (SPEC §16's `GET /limits`). */
  pathGlobs: readonly string[] | null
  /** SPEC §16: a payout this entry judges is never a probable duplicate. */
  duplicatesAllowed: boolean
}

/** One way an OAuth access token names this caller: every field given must equal the token's. */
export interface OAuthMatch {
  subject: string | null
  clientId: string | null
}

/**
 * SPEC §15: the tokens of an external authorization server whose fields match, or the embedded
 * server's grants, which a person gives this caller at consent.
 */
export type OAuthAccess = { kind: 'matches', matches: readonly OAuthMatch[] } | { kind: 'grantable' }

export interface CallerSpec {
  id: string
  /** Lower-case hex. */
  keySha256: string | null
  sources: Cidr[] | null
  allow: AllowRule[]
  rateLimit: { requests: number, perSeconds: number } | null
  requireExternalReference: boolean
  amountLimits: AmountLimit[]
  /** SPEC §11: may decide other callers' approvals. */
  approver: boolean
  /** SPEC §16: none of this caller's payouts is judged a probable duplicate. */
  duplicatesAllowed: boolean
  /** SPEC §15: null when no OAuth access token is ever this caller. */
  oauth: OAuthAccess | null
}

export type CallersLoad = { ok: true, callers: CallerSpec[] } | { ok: false, problems: string[] }

export function readCallersFile (file: string): CallersLoad {
  const read = readDocumentFile(file, 'PROXY_CALLERS_FILE', MAX_CALLERS_FILE_BYTES)
  if (!read.ok) return read
  const load = validateCallers(read.document)
  return load.ok ? load : { ok: false, problems: load.problems.map((p) => `${file}: ${p}`) }
}

export function parseCallersText (text: string, extension: string): CallersLoad {
  const parsed = parseDocumentText(text, extension)
  return parsed.ok ? validateCallers(parsed.document) : parsed
}

export function validateCallers (document: unknown): CallersLoad {
  const shape = checkCallersSchema(document)
  if (!shape.ok) return shape
  const problems: string[] = []
  const report: Report = (path, message) => { problems.push(`${path}: ${message}`) }
  const ids = new Set<string>()
  const keys = new Map<string, number>()
  const callers = shape.document.callers.map((entry, index) => {
    const at = `callers[${index}]`
    if (ids.has(entry.id)) report(`${at}.id`, `"${entry.id}" is not unique`)
    ids.add(entry.id)
    // One key, two callers: which rules it would get would depend on the file's order.
    const key = entry.keySha256?.toLowerCase()
    const holder = key === undefined ? undefined : keys.get(key)
    if (holder !== undefined) report(`${at}.keySha256`, `is the key of callers[${holder}] too: every caller needs its own key`)
    else if (key !== undefined) keys.set(key, index)
    if (entry.keySha256 === undefined && entry.sources === undefined && entry.oauth === undefined) report(at, 'needs keySha256, sources or oauth')
    return callerSpec(entry, at, report)
  })
  checkKeylessOverlap(callers, report)
  checkOAuthMatches(callers, report)
  return problems.length > 0 ? { ok: false, problems } : { ok: true, callers }
}

type Report = (path: string, message: string) => void

function callerSpec (entry: CallerEntry, at: string, report: Report): CallerSpec {
  let sources: Cidr[] | null = null
  if (entry.sources !== undefined) {
    sources = []
    for (const [i, text] of entry.sources.entries()) {
      const cidr = parseCidr(text.trim())
      if (cidr === null) report(`${at}.sources[${i}]`, 'must be an IP address or CIDR')
      else sources.push(cidr)
    }
  }
  return {
    id: entry.id,
    keySha256: entry.keySha256?.toLowerCase() ?? null,
    sources,
    allow: entry.allow.map(allowRule),
    rateLimit: entry.rateLimit ?? null,
    requireExternalReference: entry.requireExternalReference ?? false,
    amountLimits: (entry.amountLimits ?? []).map((limit, i) => amountLimit(limit, `${at}.amountLimits[${i}]`, report)),
    approver: entry.approver ?? false,
    duplicatesAllowed: entry.duplicates === 'allow',
    oauth: oauthAccess(entry.oauth, `${at}.oauth`, report),
  }
}

function oauthAccess (entry: CallerEntry['oauth'], at: string, report: Report): OAuthAccess | null {
  if (entry === undefined) return null
  if (!Array.isArray(entry)) return { kind: 'grantable' }
  if (entry.length === 0) report(at, 'must list at least one match, or be left out')
  for (const [i, match] of entry.entries()) {
    if (match.subject === undefined && match.clientId === undefined) report(`${at}[${i}]`, 'must name subject, clientId or both: a match of no field would be every token')
  }
  return { kind: 'matches', matches: entry.map((m) => ({ subject: m.subject ?? null, clientId: m.clientId ?? null })) }
}

/** One match, two callers: which rules a token got would depend on the file's order. */
function checkOAuthMatches (callers: CallerSpec[], report: Report): void {
  const seen = new Map<string, number>()
  for (const [index, caller] of callers.entries()) {
    if (caller.oauth?.kind !== 'matches') continue
    for (const [i, match] of caller.oauth.matches.entries()) {
      const key = JSON.stringify([match.subject, match.clientId])
      const holder = seen.get(key)
      if (holder !== undefined && holder !== index) report(`callers[${index}].oauth[${i}]`, `is a match of callers[${holder}] too: a token would have two callers`)
      else seen.set(key, index)
    }
  }
}

/** An absent list allows every value; an absent `paths` every path. */
function allowRule (rule: AllowRuleEntry): AllowRule {
  return {
    environments: new Set(rule.environments ?? ENVIRONMENT_NAMES),
    interfaces: new Set(rule.interfaces ?? INTERFACE_NAMES),
    methods: new Set(rule.methods ?? METHODS),
    paths: rule.paths === undefined ? null : compilePathRule(rule.paths),
    pathGlobs: rule.paths ?? null,
  }
}

function amountLimit (limit: AmountLimitEntry, at: string, report: Report): AmountLimit {
  return {
    paths: limit.paths === undefined ? null : compilePathRule(limit.paths),
    amount: limit.amount,
    currency: limit.currency,
    perRequest: decimalMap(limit.perRequest, `${at}.perRequest`, report),
    perDay: decimalMap(limit.perDay, `${at}.perDay`, report),
    approveAbove: decimalMap(limit.approveAbove, `${at}.approveAbove`, report),
    pathGlobs: limit.paths ?? null,
    duplicatesAllowed: limit.duplicates === 'allow',
  }
}

/** Amounts as plain decimal text: a number is taken as JavaScript prints it, so 1e21 is refused. */
function decimalMap (
  amounts: Record<string, string | number> | undefined,
  at: string,
  report: Report,
): Map<string, string> {
  const map = new Map<string, string>()
  for (const [currency, amount] of Object.entries(amounts ?? {})) {
    const text = typeof amount === 'number' ? String(amount) : amount
    if (!PLAIN_DECIMAL.test(text)) report(`${at}.${currency}`, 'must be a plain decimal (a number or a string like "500.00")')
    else map.set(currency, text)
  }
  return map
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
