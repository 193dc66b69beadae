/**
 * Looks for a marker (the provider's `IP_NOT_ALLOWED`) in the first bytes of a body while it
 * streams past, without holding the body: a marker split across two chunks is found too. A
 * compressed body is searched in what its first bytes decode to.
 */
import { brotliDecompressSync, constants, gunzipSync, inflateSync, type ZlibOptions, type BrotliOptions } from 'node:zlib'

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

/** What the first bytes of a body may decode to at most: a bomb's first kilobytes are not inflated past it. */
const MAX_DECODED_BYTES = 1024 * 1024

type Decode = (input: Buffer) => Buffer
// Flushed, not finished: a prefix of a compressed body decodes as far as it goes, without an error.
const zlibOptions: ZlibOptions = { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: MAX_DECODED_BYTES }
const brotliOptions: BrotliOptions = { finishFlush: constants.BROTLI_OPERATION_FLUSH, maxOutputLength: MAX_DECODED_BYTES }
const DECODERS: Readonly<Record<string, Decode>> = {
  gzip: (input) => gunzipSync(input, zlibOptions),
  'x-gzip': (input) => gunzipSync(input, zlibOptions),
  deflate: (input) => inflateSync(input, zlibOptions),
  br: (input) => brotliDecompressSync(input, brotliOptions),
}

/**
 * Searches a body sent with `Content-Encoding: encoding` (gzip, deflate or br; null for anything
 * else) in what its first `limitBytes` compressed bytes decode to. Each chunk decodes the prefix
 * again: error bodies are small, and this keeps the answer synchronous, like the plain scan's.
 */
export function createDecodingScan (marker: string, limitBytes: number, encoding: string): MarkerScan | null {
  const decode = DECODERS[encoding.trim().toLowerCase()]
  if (decode === undefined) return null
  const needle = Buffer.from(marker)
  let input: Buffer = Buffer.alloc(0)
  let finished = false
  return {
    get finished () { return finished },
    push (chunk: Buffer): boolean {
      if (finished) return false
      input = Buffer.concat([input, chunk.subarray(0, limitBytes - input.length)])
      let decoded: Buffer
      try {
        decoded = decode(input)
      } catch {
        // Corrupt, not what it says it is, or a bomb: nothing to search.
        finished = true
        return false
      }
      const found = decoded.includes(needle)
      finished = found || input.length >= limitBytes
      return found
    },
  }
}
