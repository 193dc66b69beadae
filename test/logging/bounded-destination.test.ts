import t from 'tap'
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { boundedDestination, createLogger } from '../../src/logger.js'

/** Reads what the pipe holds now, without blocking. */
function drain (fd: number): string {
  const chunks: Buffer[] = []
  const buf = Buffer.alloc(64 * 1024)
  for (;;) {
    try {
      const n = readSync(fd, buf)
      if (n === 0) break
      chunks.push(Buffer.from(buf.subarray(0, n)))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') break
      throw err
    }
  }
  return Buffer.concat(chunks).toString('utf8')
}

t.test('a log reader that stops reading costs dropped lines, not unbounded memory; what is kept arrives whole', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bounded-log-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const fifo = join(dir, 'stdout')
  execFileSync('mkfifo', [fifo])
  // A pipe nobody reads until we say so: the read end is ours, held open and left alone.
  const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
  const writeFd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
  t.teardown(() => { closeSync(readFd) })

  const maxBytes = 256 * 1024
  let droppedBytes = 0
  let droppedLines = 0
  const destination = boundedDestination((bytes) => { droppedBytes += bytes; droppedLines++ }, writeFd, maxBytes)
  const log = createLogger('info', destination)
  const filler = 'x'.repeat(900)
  const lines = 2_000 // ~2 MB: the pipe (64 KiB) and the bound (256 KiB) together hold a fraction
  for (let i = 0; i < lines; i++) log.info({ i, filler }, 'line')
  t.ok(droppedBytes > 1_000_000, `most of ~2 MB was dropped (${droppedBytes} bytes)`)

  // Once the reader comes back, every line not dropped arrives, whole and in order.
  let text = ''
  const arrived = (): number => text.split('\n').length - 1
  for (let waited = 0; waited < 10_000 && arrived() + droppedLines < lines; waited += 50) {
    text += drain(readFd)
    await sleep(50)
  }
  const indexes = text.split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { i: number }).i)
  t.equal(indexes.length + droppedLines, lines, `${indexes.length} lines arrived, ${droppedLines} were dropped, none lost otherwise`)
  t.equal(indexes[0], 0, 'the first lines were kept')
  t.same(indexes, [...indexes].sort((a, b) => a - b), 'in order')
  destination.end()
})

t.test('lines with multi-byte characters arrive byte for byte', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bounded-log-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, 'stdout')
  const fd = openSync(file, 'w')
  const destination = boundedDestination(() => { t.fail('nothing is dropped') }, fd)
  const log = createLogger('info', destination)
  const names = ['Zürich', 'Nairobi ✓', '東京', 'emoji 🚀 and a "quote"']
  for (const name of names) log.info({ name }, 'city')
  const closed = once(destination, 'close')
  destination.end()
  await closed
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '')
  t.same(lines.map((l) => (JSON.parse(l) as { name: string }).name), names)
})
