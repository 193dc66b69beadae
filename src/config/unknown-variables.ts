/**
 * `PAYMENTS_*` and `PROXY_*` variables the schema does not know. env-schema drops them silently, so
 * a misspelt setting would vanish and its default apply unseen: each is named with the known name
 * it most likely meant. The known names are the schema's, so a setting added there is known here.
 */

const OURS = /^(PAYMENTS|PROXY)_/
/**
 * Kubernetes service links (`<SERVICE>_SERVICE_HOST`, `<SERVICE>_PORT_8080_TCP_ADDR`, …) for a
 * Service named `payments-…` or `proxy-…` are set in every pod of the namespace: not settings.
 */
const SERVICE_LINK = /_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT|PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)$/

export interface UnknownVariable {
  name: string
  /** The known name it most likely meant, when one is close enough. */
  suggestion: string | null
}

export function findUnknownVariables (names: Iterable<string>, known: ReadonlySet<string>): UnknownVariable[] {
  const out: UnknownVariable[] = []
  for (const name of names) {
    if (!OURS.test(name) || known.has(name)) continue
    if (SERVICE_LINK.test(name) && !closeToAny(name, known)) continue
    out.push({ name, suggestion: closest(name, known) })
  }
  return out
}

export function describeUnknown ({ name, suggestion }: UnknownVariable): string {
  return `${name} is not a known setting${suggestion === null ? '' : `: did you mean ${suggestion}?`}`
}

/** Close enough: within a third of the name's length in edits, or a word more or less at the end (`_SECONDS`). */
function closest (name: string, known: ReadonlySet<string>): string | null {
  let best: string | null = null
  let bestDistance = Infinity
  for (const candidate of known) {
    const distance = candidate.startsWith(`${name}_`) || name.startsWith(`${candidate}_`) ? 1 : editDistance(name, candidate)
    if (distance < bestDistance) { best = candidate; bestDistance = distance }
  }
  return best !== null && bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : null
}

/** A misspelt PROXY_PORT (PROXY_PROT) is ours, even though it ends like a service link. */
function closeToAny (name: string, known: ReadonlySet<string>): boolean {
  for (const candidate of known) if (editDistance(name, candidate) <= 2) return true
  return false
}

/** Levenshtein distance, two rows. */
function editDistance (a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution))
    }
    previous = current
  }
  return previous[b.length] ?? 0
}
