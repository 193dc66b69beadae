/**
 * Who is calling and may it do this (SPEC §7: identity, then `allow`), as a pure decision over the
 * loaded callers and the facts of one request, so every branch is table-tested without sockets.
 */
import { hash } from 'node:crypto'
import type { BlockList } from 'node:net'
import { blockListOf, peerIn } from '../config/network-lists.js'
import type { CanonicalPath } from '../routing/canonical-path.js'
import type { CallerSpec, OAuthMatch } from './callers-file.js'

export interface CallerIndex {
  /** Every caller of the file in its order, those reached only with a token included. */
  all: readonly CallerSpec[]
  byKey: ReadonlyMap<string, { spec: CallerSpec, sources: BlockList | null }>
  keyless: ReadonlyArray<{ spec: CallerSpec, sources: BlockList }>
  /** SPEC §15: the callers an external authorization server's tokens may be, in file order. */
  byToken: ReadonlyArray<{ spec: CallerSpec, matches: readonly OAuthMatch[], sources: BlockList | null }>
}

/** What a verified access token says of who holds it (SPEC §15). */
export interface TokenHolder {
  subject: string | null
  /** `client_id`, else `azp`. */
  clientId: string | null
}

export interface IdentityFacts {
  /** Every Authorization value the client sent (raw headers: Node keeps only the first). */
  authorizations: string[]
  peer: string
}

export interface RuleFacts {
  environment: string | null
  interface: string
  method: string
  /** The folded canonical path below the interface base (SPEC §3). */
  path: CanonicalPath
}

/** The first field, in rule order, that no allow rule admitting the fields before it admits. */
export type Mismatch = 'environment' | 'interface' | 'method' | 'path'

export function indexCallers (callers: CallerSpec[]): CallerIndex {
  const byKey = new Map<string, { spec: CallerSpec, sources: BlockList | null }>()
  const keyless: Array<{ spec: CallerSpec, sources: BlockList }> = []
  const byToken: Array<{ spec: CallerSpec, matches: readonly OAuthMatch[], sources: BlockList | null }> = []
  for (const spec of callers) {
    const sources = spec.sources === null ? null : blockListOf(spec.sources)
    if (spec.keySha256 !== null) byKey.set(spec.keySha256, { spec, sources })
    else if (sources !== null) keyless.push({ spec, sources })
    if (spec.oauth?.kind === 'matches') byToken.push({ spec, matches: spec.oauth.matches, sources })
  }
  return { all: callers, byKey, keyless, byToken }
}

export function keySha256 (key: string): string {
  return hash('sha256', key)
}

const BEARER = /^bearer +(\S+) *$/i
export const UNKNOWN_CALLER_KEY = 'unknown caller key'

/** The credential of an `Authorization: Bearer <credential>` value; undefined for any other form. */
export function bearerOf (authorization: string): string | undefined {
  return BEARER.exec(authorization)?.[1]
}

/** The caller, or why there is none (401). */
export function identify (index: CallerIndex, facts: IdentityFacts): CallerSpec | string {
  if (facts.authorizations.length > 1) return 'more than one Authorization header'
  const [authorization] = facts.authorizations
  if (authorization !== undefined) {
    const key = bearerOf(authorization)
    if (key === undefined) return 'Authorization is not "Bearer <caller key>"'
    // A presented key that matches no caller is refused, never downgraded to a key-less caller.
    const entry = index.byKey.get(keySha256(key))
    if (entry === undefined) return UNKNOWN_CALLER_KEY
    if (entry.sources !== null && !peerIn(entry.sources, facts.peer)) return 'caller key used from outside its sources'
    return entry.spec
  }
  const keyless = index.keyless.find((c) => peerIn(c.sources, facts.peer))
  return keyless?.spec ?? 'no caller key'
}

/**
 * The caller a verified token's holder is (SPEC §15): the one with a match whose every named field
 * equals the token's; the file refuses one match on two callers, and two callers matching one
 * token through different fields are refused here, never settled by the file's order.
 */
export function callerOfToken (index: CallerIndex, holder: TokenHolder, peer: string): CallerSpec | string {
  const found = index.byToken.filter(({ matches }) => matches.some((m) =>
    (m.subject === null || m.subject === holder.subject) && (m.clientId === null || m.clientId === holder.clientId)))
  if (found.length > 1) return `the token matches ${found.length} callers (${found.map(({ spec }) => spec.id).join(', ')})`
  const [entry] = found
  if (entry === undefined) return 'the token matches no caller'
  // `sources` bounds where a caller is used from, whatever its credential.
  return entry.sources !== null && !peerIn(entry.sources, peer) ? TOKEN_OUTSIDE_SOURCES : entry.spec
}

export const TOKEN_OUTSIDE_SOURCES = 'used from outside the caller\'s sources'

type AllowRule = CallerSpec['allow'][number]

/** Each field's test, in the order a refusal is explained: the environment first, the path last. */
const FIELD_TESTS: ReadonlyArray<[Mismatch, (rule: AllowRule, facts: RuleFacts) => boolean]> = [
  ['environment', (rule, facts) => facts.environment === null ? rule.environments.size === 2 : rule.environments.has(facts.environment)],
  ['interface', (rule, facts) => rule.interfaces.has(facts.interface)],
  ['method', (rule, facts) => rule.methods.has(facts.method)],
  ['path', (rule, facts) => rule.paths === null || rule.paths(facts.path)],
]

/** Null when a rule admits the request; else the field that ruled out the last candidate rules. */
export function firstMismatch (caller: CallerSpec, facts: RuleFacts): Mismatch | null {
  let candidates: readonly AllowRule[] = caller.allow
  for (const [field, admits] of FIELD_TESTS) {
    candidates = candidates.filter((rule) => admits(rule, facts))
    if (candidates.length === 0) return field
  }
  return null
}
