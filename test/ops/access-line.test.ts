import t from 'tap'
import pino, { type Logger } from 'pino'
import { loggerOptions } from '../../src/logger.js'
import { ACCESS_MESSAGE, accessLineWriter, type AccessLine } from '../../src/ops/access-line.js'
import { printable } from '../helpers/printable.js'

/** A logger as the proxy makes it, writing to an array, at a fixed time; and request-audit.ts's access child of it. */
function loggers (options: pino.LoggerOptions = {}): { lines: string[], root: Logger, access: Logger } {
  const lines: string[] = []
  const root = pino({ ...loggerOptions('info'), timestamp: () => ',"time":"2026-11-28T12:00:00.123Z"', ...options }, { write: (line: string) => { lines.push(line) } })
  const access = root.child({}, { redact: [], formatters: { log: (fields: object) => fields } })
  return { lines, root, access }
}

const STRINGS = ['', 'a', 'sandbox', '/v1/payouts/42', 'quote"in', 'back\\slash', 'tab\there', 'nl\nx', '\u0000\u001f', '\u007f', 'é€', '😀', '\u2028\u2029', 'x'.repeat(41), 'y'.repeat(42), 'z'.repeat(101), '{"json":true}', '</script>']
const NUMBERS = [0, 200, 502, 0.01, 1.5, 12345.67, 1e21, -1, Number.NaN, Number.POSITIVE_INFINITY]

t.test('the same line as pino writes of the same fields, byte for byte', async (t) => {
  let seed = 0x2545f491
  const pick = <T>(items: readonly T[]): T => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return items[(seed >>> 0) % items.length] as T
  }
  let compared = 0
  for (let i = 0; i < 2000; i++) {
    const line: AccessLine = {
      reqId: pick(STRINGS),
      environment: pick([...STRINGS, null]),
      interface: pick(STRINGS),
      method: pick(STRINGS),
      path: pick(STRINGS),
      status: pick(NUMBERS),
      retried: pick([true, false]),
      durationMs: pick(NUMBERS),
      caller: pick(STRINGS),
    }
    if (pick([0, 1, 2]) === 0) {
      line.via = pick(STRINGS)
      line.tool = pick(STRINGS)
    }
    const ours = loggers()
    accessLineWriter(ours.access)(line)
    const theirs = loggers()
    theirs.access.info({ ...line }, ACCESS_MESSAGE)
    if (ours.lines.join('') !== theirs.lines.join('')) {
      t.equal(printable(ours.lines.join('')), printable(theirs.lines.join('')), `the first line that differs, line ${i}`)
      return
    }
    compared++
  }
  t.equal(compared, 2000, 'every line equal')
})

t.test('a level above info writes nothing; a level set later is read on the next line', async (t) => {
  const { lines, access } = loggers()
  const write = accessLineWriter(access)
  const line: AccessLine = { reqId: 'r', environment: 'sandbox', interface: 'fiat', method: 'GET', path: '/p', status: 200, retried: false, durationMs: 1, caller: 'anonymous' }
  write(line)
  access.level = 'warn'
  write(line)
  access.level = 'debug'
  write(line)
  t.equal(lines.length, 2)
})

t.test('a logger that changes its lines writes the access line itself', async (t) => {
  const line: AccessLine = { reqId: 'r', environment: 'sandbox', interface: 'fiat', method: 'GET', path: '/p', status: 200, retried: false, durationMs: 1, caller: 'anonymous' }
  const mixed = loggers({ mixin: () => ({ added: 1 }) })
  accessLineWriter(mixed.access)(line)
  t.match(mixed.lines.map((text) => JSON.parse(text) as unknown), [{ added: 1, reqId: 'r', msg: ACCESS_MESSAGE }], 'a mixin')
  const nested = loggers({ nestedKey: 'payload' })
  accessLineWriter(nested.access)(line)
  t.match(nested.lines.map((text) => JSON.parse(text) as unknown), [{ payload: { reqId: 'r' }, msg: ACCESS_MESSAGE }], 'a nested key')
})
