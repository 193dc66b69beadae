/**
 * Looks for a marker (the provider's `IP_NOT_ALLOWED`) in the first bytes of a body while it
 * streams past, without holding the body: a marker split across two chunks is found too. A
 * compressed body is searched in what its first bytes decode to.
 */
import { brotliDecompressSync, constants, gunzipSync, inflateSync, type ZlibOptions, type BrotliOptions } from 'node:zlib'

export interface MarkerScan {
  /** Feeds the next chunk; true when the marker has just been found. */
  push(chunk: Buffer): boolean
  /** The body has ended: true when what was fed but not yet searched holds the marker. */
  end(): boolean
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
    end: () => false,
  }
}

/**
 * What the first bytes of a body may decode to at most: a bomb's first kilobytes are not inflated
 * past it. An error body is a few hundred bytes of JSON; one whose first 8 KiB compressed decode to
 * more than this is not searched.
 */
const MAX_DECODED_BYTES = 64 * 1024

type Decode = (input: Buffer) => Buffer
// Flushed, not finished: a prefix of a compressed body decodes as far as it goes, without an error.
const zlibOptions: ZlibOptions = { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: MAX_DECODED_BYTES }
const brotliOptions: BrotliOptions = {
  finishFlush: constants.BROTLI_OPERATION_FLUSH,
  maxOutputLength: MAX_DECODED_BYTES,
}
const DECODERS: ReadonlyMap<string, Decode> = new Map([
  ['gzip', (input: Buffer) => gunzipSync(input, zlibOptions)],
  ['x-gzip', (input: Buffer) => gunzipSync(input, zlibOptions)],
  ['deflate', (input: Buffer) => inflateSync(input, zlibOptions)],
  ['br', (input: Buffer) => brotliDecompressSync(input, brotliOptions)],
])

/**
 * Searches a body sent with `Content-Encoding: encoding` (one of gzip, deflate, br; null for
 * anything else, lists of encodings included) in what its first `limitBytes` compressed bytes
 * decode to. A prefix is decoded whole, which keeps the answer synchronous like the plain scan's;
 * so that a body trickling in byte by byte is not decoded once per byte, a push decodes only once
 * the input has doubled since the last decode, and end() decodes what came after.
 */
export function createDecodingScan (marker: string, limitBytes: number, encoding: string): MarkerScan | null {
  const decode = DECODERS.get(encoding.trim().toLowerCase())
  if (decode === undefined) return null
  const needle = Buffer.from(marker)
  let input: Buffer = Buffer.alloc(0)
  let decodedBytes = 0
  let finished = false
  const search = (): boolean => {
    decodedBytes = input.length
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
  }
  return {
    get finished () { return finished },
    push (chunk: Buffer): boolean {
      if (finished) return false
      input = Buffer.concat([input, chunk.subarray(0, limitBytes - input.length)])
      return input.length >= limitBytes || input.length >= 2 * decodedBytes ? search() : false
    },
    end (): boolean {
      return !finished && input.length > decodedBytes ? search() : false
    },
  }
}
