import t from 'tap'
import { randomBytes } from 'node:crypto'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { createDecodingScan, createMarkerScan } from '../../src/routing/marker-scan.js'

const MARKER = 'IP_NOT_ALLOWED'
const BODY = Buffer.from(`{"success":false,"code":"${MARKER}","message":"Request IP is not in the allowlist"}`)

function feed (chunks: Buffer[], limit = 8192): { found: boolean, calls: number } {
  const scan = createMarkerScan(MARKER, limit)
  let found = false
  let calls = 0
  for (const chunk of chunks) {
    if (scan.finished) break
    calls++
    if (scan.push(chunk)) found = true
  }
  return { found, calls }
}

t.test('finds the marker wherever the body is split, in two or three chunks', async (t) => {
  for (let i = 0; i <= BODY.length; i++) {
    t.equal(feed([BODY.subarray(0, i), BODY.subarray(i)]).found, true, `split at ${i}`)
  }
  const at = BODY.indexOf(MARKER)
  for (let i = at + 1; i < at + MARKER.length - 1; i++) {
    t.equal(feed([BODY.subarray(0, i), BODY.subarray(i, i + 1), BODY.subarray(i + 1)]).found, true, `one-byte chunk at ${i}`)
  }
})

t.test('does not find what is not there, nor a marker broken by other bytes', async (t) => {
  t.equal(feed([Buffer.from('{"code":"IP_NOT_"}'), Buffer.from('{"code":"ALLOWED"}')]).found, false)
  t.equal(feed([Buffer.from('IP_NOT_ALLOWE'), Buffer.from('x'), Buffer.from('D')]).found, false)
  t.equal(feed([]).found, false)
})

t.test('searches only the first limitBytes, then asks for nothing more', async (t) => {
  const padding = Buffer.alloc(100, ' ')
  t.equal(feed([padding, BODY], 100).found, false, 'a marker past the limit is not searched for')
  t.equal(feed([padding, BODY], 100 + BODY.indexOf(MARKER) + MARKER.length).found, true, 'one ending exactly at the limit is found')
  t.equal(feed([padding, BODY], 100 + BODY.indexOf(MARKER) + MARKER.length - 1).found, false, 'one ending a byte past it is not')
  t.equal(feed([padding, padding, padding], 150).calls, 2, 'finished once the limit is reached')
  t.equal(feed([BODY, BODY, BODY]).calls, 1, 'finished once the marker is found')
})

t.test('a compressed body is searched in what its first bytes decode to: gzip, deflate, br, in any split', async (t) => {
  const encoders: Array<[string, (b: Buffer) => Buffer]> = [['gzip', gzipSync], ['x-gzip', gzipSync], ['deflate', deflateSync], ['br', brotliCompressSync], [' GZIP ', gzipSync]]
  for (const [encoding, encode] of encoders) {
    const compressed = encode(BODY)
    for (let i = 0; i <= compressed.length; i++) {
      const scan = createDecodingScan(MARKER, 8192, encoding)
      if (scan === null) throw new Error(`no scan for ${encoding}`)
      const found = [compressed.subarray(0, i), compressed.subarray(i)].some((chunk) => !scan.finished && scan.push(chunk)) || scan.end()
      t.equal(found, true, `${encoding}, split at ${i}`)
    }
    const clean = createDecodingScan(MARKER, 8192, encoding)
    t.equal(clean?.push(encode(Buffer.from('{"success":false,"code":"LIMIT"}'))), false, `${encoding}: nothing found where there is nothing`)
  }
})

t.test('the decoding scan reads only the first limitBytes of compressed input, and survives what will not decode', async (t) => {
  t.equal(createDecodingScan(MARKER, 8192, 'compress'), null, 'an encoding it cannot read is not searched')
  const padded = gzipSync(Buffer.concat([randomBytes(20_000), BODY]))
  const scan = createDecodingScan(MARKER, 8192, 'gzip')
  t.equal(scan?.push(padded), false, 'a marker beyond the first 8 KiB of compressed bytes is not searched for')
  t.equal(scan?.finished, true, 'and nothing more is asked for')
  const corrupt = createDecodingScan(MARKER, 8192, 'gzip')
  t.equal(corrupt?.push(Buffer.from('not gzip at all, IP_NOT_ALLOWED')), false, 'corrupt input: no marker, no throw')
  t.equal(corrupt?.finished, true)
  // 2 MB of zeros compress to about 2 KB: the marker is inside the first 8 KiB of compressed bytes,
  // but past what the scan lets them decode to.
  const bombBody = gzipSync(Buffer.concat([Buffer.alloc(2 * 1024 * 1024), BODY]))
  t.ok(bombBody.length < 8192, `the whole bomb (${bombBody.length} bytes) is within the bytes searched`)
  const bomb = createDecodingScan(MARKER, 8192, 'gzip')
  t.equal(bomb?.push(bombBody), false, 'a bomb is not inflated past its cap')
  t.equal(bomb?.finished, true)
  t.equal(createDecodingScan(MARKER, 8192, 'gzip, br'), null, 'a list of encodings is not searched')
  t.equal(createDecodingScan(MARKER, 8192, 'constructor'), null, 'a name that is not an encoding finds no decoder')
})

t.test('a compressed body trickling in byte by byte is found, at the latest when it ends', async (t) => {
  const compressed = gzipSync(BODY)
  const scan = createDecodingScan(MARKER, 8192, 'gzip')
  if (scan === null) throw new Error('no scan')
  let found = false
  for (let i = 0; i < compressed.length && !scan.finished; i++) found = scan.push(compressed.subarray(i, i + 1)) || found
  t.equal(found || scan.end(), true)
})
