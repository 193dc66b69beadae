/**
 * Looks for a marker (the provider's `IP_NOT_ALLOWED`) in the first bytes of a body while it
 * streams past, without holding the body: a marker split across two chunks is found too.
 */
export interface MarkerScan {
  /** Feeds the next chunk; true when the marker has just been found. */
  push(chunk: Buffer): boolean
  /** True once the marker was found or `limitBytes` were searched: nothing more to feed. */
  readonly finished: boolean
}

export function createMarkerScan (marker: string, limitBytes: number): MarkerScan {
  const needle = Buffer.from(marker)
  let searched = 0
  let tail: Buffer = Buffer.alloc(0)
  let finished = false
  return {
    get finished () { return finished },
    push (chunk: Buffer): boolean {
      if (finished) return false
      const part = chunk.subarray(0, limitBytes - searched)
      searched += part.length
      const window = tail.length === 0 ? part : Buffer.concat([tail, part])
      const found = window.includes(needle)
      // A copy, so the scan does not keep the whole chunk alive.
      tail = Buffer.from(window.subarray(Math.max(0, window.length - needle.length + 1)))
      finished = found || searched >= limitBytes
      return found
    },
  }
}
