/**
 * Judges take only a `CanonicalPath`, which only canonical-path.ts makes: table tests obtain one the
 * way a request does, through the reader, so a path the reader would refuse cannot reach a judge.
 */
import { readRestPath, type CanonicalPath } from '../../src/routing/canonical-path.js'

/** The folded form every judge compares (`/V1/Payouts/` -> `/v1/payouts`). */
export function folded (path: string, allowDots = false): CanonicalPath {
  const reading = readRestPath(path, { allowDots })
  if (!reading.ok) throw new Error(`${JSON.stringify(path)} is not canonical: ${reading.problem.reason}`)
  return reading.folded
}
