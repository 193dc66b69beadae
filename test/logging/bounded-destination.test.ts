/**
 * The sidecar's log destination (src/log-destination.ts): on a pipe, the lines of a turn written
 * through a libuv stream; on a file, sonic-boom. Both bounded, both byte for byte, and on a pipe
 * nothing waiting is lost at exit or to a reader that went away.
 */
import t, { type Test } from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { closeSync, constants, openSync, readFileSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { boundedDestination, PipeLines } from '../../src/log-destination.js'
import { createLogger } from '../../src/logger.js'
import { tempDir } from '../helpers/temp-dir.js'

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

/** A FIFO in a fresh directory, both ends open: ours to read (non-blocking), and one to write. */
function fifoPair (t: Test, writeFlags = constants.O_WRONLY | constants.O_NONBLOCK): { fifo: string, readFd: number, writeFd: number } {
  const fifo = join(tempDir(t), 'stdout')
  execFileSync('mkfifo', [fifo])
  const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
  return { fifo, readFd, writeFd: openSync(fifo, writeFlags) }
}

t.test('a log reader that stops reading costs dropped lines, not unbounded memory; what is kept arrives whole', async (t) => {
  // A pipe nobody reads until we say so: the read end is ours, held open and left alone.
  const { readFd, writeFd } = fifoPair(t)
  t.teardown(() => { closeSync(readFd) })

  const maxBytes = 256 * 1024
  let droppedBytes = 0
  let droppedLines = 0
  const destination = boundedDestination((bytes) => { droppedBytes += bytes; droppedLines++ }, writeFd, maxBytes)
  t.ok(destination instanceof PipeLines, 'written as lines to a pipe')
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
  await destination.end()
})

const NAMES = ['Zürich', 'Nairobi ✓', '東京', 'emoji 🚀 and a "quote"']

t.test('on a file, lines with multi-byte characters arrive byte for byte', async (t) => {
  const file = join(tempDir(t), 'stdout')
  const fd = openSync(file, 'w')
  const destination = boundedDestination(() => { t.fail('nothing is dropped') }, fd)
  t.notOk(destination instanceof PipeLines, 'a file is written by sonic-boom')
  const log = createLogger('info', destination)
  for (const name of NAMES) log.info({ name }, 'city')
  await destination.end()
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '')
  t.same(lines.map((l) => (JSON.parse(l) as { name: string }).name), NAMES)
})

const DESTINATION_MODULE = new URL('../../dist/log-destination.js', import.meta.url).href
const LOGGER_MODULE = new URL('../../dist/logger.js', import.meta.url).href

/**
 * Runs `script` in a child Node process on the built modules, its stdout a FIFO as containerd
 * gives a container (a spawn's 'pipe' would be a socket pair); what it printed.
 */
async function childStdout (t: Test, script: string): Promise<{ stdout: string, stderr: string, code: number | null }> {
  const { readFd, writeFd } = fifoPair(t, constants.O_WRONLY)
  const child = spawn(process.execPath, ['--input-type=module', '-e', `const { boundedDestination, PipeLines } = await import(${JSON.stringify(DESTINATION_MODULE)}); const { createLogger } = await import(${JSON.stringify(LOGGER_MODULE)}); ${script}`], { stdio: ['ignore', writeFd, 'pipe'] })
  closeSync(writeFd)
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (s: string) => { stderr += s })
  let exited: number | null | undefined
  child.once('exit', (code) => { exited = code })
  let stdout = ''
  while (exited === undefined) {
    stdout += drain(readFd)
    await sleep(5)
  }
  stdout += drain(readFd)
  closeSync(readFd)
  return { stdout, stderr, code: exited }
}

t.test('on a pipe, lines with multi-byte characters arrive byte for byte, in order, and none is lost at exit', async (t) => {
  // process.exit in the same turn as the last lines: no later turn will write them.
  const { stdout, stderr, code } = await childStdout(t, `const destination = boundedDestination(() => process.exit(3)); process.stderr.write(String(destination instanceof PipeLines)); const log = createLogger('info', destination); for (let i = 0; i < 3000; i++) log.info({ i, name: ${JSON.stringify(NAMES)}[i % 4] }, 'city'); process.exit(0)`)
  t.equal(code, 0)
  t.equal(stderr, 'true', 'written as lines to a pipe')
  const lines = stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { i: number, name: string })
  t.equal(lines.length, 3000, 'every line arrived')
  t.ok(lines.every((line, i) => line.i === i && line.name === NAMES[i % 4]), 'whole, in order, byte for byte')
})

t.test('on a pipe whose reader has gone, lines are dropped and the process goes on; a reader that comes back gets the lines from then on', async (t) => {
  const { fifo, readFd, writeFd } = fifoPair(t)
  let dropped = 0
  const destination = boundedDestination(() => { dropped++ }, writeFd)
  t.ok(destination instanceof PipeLines, 'written as lines to a pipe')
  const log = createLogger('info', destination)
  log.info('before the reader left')
  await sleep(20)
  t.match(drain(readFd), /before the reader left/)
  closeSync(readFd)
  log.info('after')
  await sleep(50)
  log.info('later')
  await sleep(20)
  t.ok(dropped >= 1, `lines after the reader left are dropped (${dropped})`)

  // A log collector that restarts opens the FIFO again.
  const again = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
  t.teardown(() => { closeSync(again) })
  log.info('once the reader is back')
  await sleep(20)
  const text = drain(again)
  t.match(text, /once the reader is back/)
  t.notMatch(text, /"msg":"(after|later)"/, 'what was dropped stays dropped')
})
