/**
 * The intake URL's path token (SPEC §10): a wrong one is 404, compared in constant time so that
 * how long an answer takes says nothing about how much of a guess matched. Both sides are hashed
 * first: timingSafeEqual needs equal lengths, and comparing digests hides the token's length too.
 */
import { createHash, timingSafeEqual } from 'node:crypto'

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest()

export type PathTokenMatcher = (candidate: string) => boolean

export function createPathTokenMatcher (tokens: readonly string[]): PathTokenMatcher {
  const digests = tokens.map(digest)
  return (candidate) => {
    const seen = digest(candidate)
    // Every token is compared, so a match on the previous token costs as long as one on the current.
    let matched = false
    for (const d of digests) matched = timingSafeEqual(d, seen) || matched
    return matched
  }
}
