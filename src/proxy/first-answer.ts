/** How the features' readers of one question (a request's target, its `via`) combine into one. */

/**
 * The first answer of the readers that answer for `input`; undefined when no feature reads it (nothing on the hot
 * path).
 */
export function firstAnswer<I, O> (
  readers: ReadonlyArray<((input: I) => O | null | undefined) | undefined>,
): ((input: I) => O | undefined) | undefined {
  const present = readers.filter((reader) => reader !== undefined)
  if (present.length === 0) return undefined
  if (present.length === 1) {
    const [only] = present
    return (input) => only?.(input) ?? undefined
  }
  return (input) => {
    for (const reader of present) {
      const found = reader(input)
      if (found !== null && found !== undefined) return found
    }
    return undefined
  }
}
