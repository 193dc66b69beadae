/**
 * Who is calling and may it do this (SPEC §7: identity, then `allow`), as a pure decision over the
 * loaded callers and the facts of one request, so every branch is table-tested without sockets.
 */
import { hash } from 'node:crypto'
import type { BlockList } from 'node:net'
import { blockListOf, peerIn } from '../config/network-lists.js'
import type { CallerSpec } from './callers-file.js'

export interface CallerIndex {
  byKey: ReadonlyMap<string, { spec: CallerSpec, sources: BlockList | null }>
  keyless: ReadonlyArray<{ spec: CallerSpec, sources: BlockList }>
}

export interface RequestFacts {
  /** Every Authorization value the client sent (raw headers: Node keeps only the first). */
  authorizations: string[]
  peer: string
  environment: string | null
  interface: string
  method: string
  /** Canonical path below the interface base. */
  path: string
}

export type Verdict =
  | { kind: 'unauthenticated', reason: string }
  | { kind: 'not-permitted', caller: CallerSpec }
  | { kind: 'permitted', caller: CallerSpec }


export function indexCallers (callers: CallerSpec[]): CallerIndex {
  const byKey = new Map<string, { spec: CallerSpec, sources: BlockList | null }>()
  const keyless: Array<{ spec: CallerSpec, sources: BlockList }> = []
  for (const spec of callers) {
    const sources = spec.sources === null ? null : blockListOf(spec.sources)
    if (spec.keySha256 !== null) byKey.set(spec.keySha256, { spec, sources })
    else if (sources !== null) keyless.push({ spec, sources })
  }
  return { byKey, keyless }
}

export function keySha256 (key: string): string {
  return hash('sha256', key)
}

const BEARER = /^bearer +(\S+) *$/i

export function identify (index: CallerIndex, facts: RequestFacts): CallerSpec | string {
  if (facts.authorizations.length > 1) return 'more than one Authorization header'
  const [authorization] = facts.authorizations
  if (authorization !== undefined) {
    const key = BEARER.exec(authorization)?.[1]
    if (key === undefined) return 'Authorization is not "Bearer <caller key>"'
    // A presented key that matches no caller is refused, never downgraded to a key-less caller.
    const entry = index.byKey.get(keySha256(key))
    if (entry === undefined) return 'unknown caller key'
    if (entry.sources !== null && !peerIn(entry.sources, facts.peer)) return 'caller key used from outside its sources'
    return entry.spec
  }
  const keyless = index.keyless.find((c) => peerIn(c.sources, facts.peer))
  return keyless?.spec ?? 'no caller key'
}

export function isPermitted (caller: CallerSpec, facts: RequestFacts): boolean {
  return caller.allow.some((rule) =>
    (facts.environment === null ? rule.environments.size === 2 : rule.environments.has(facts.environment)) &&
    rule.interfaces.has(facts.interface) &&
    rule.methods.has(facts.method) &&
    (rule.paths === null || rule.paths(facts.path)))
}

export function judgeCaller (index: CallerIndex, facts: RequestFacts): Verdict {
  const caller = identify(index, facts)
  if (typeof caller === 'string') return { kind: 'unauthenticated', reason: caller }
  return isPermitted(caller, facts) ? { kind: 'permitted', caller } : { kind: 'not-permitted', caller }
}
