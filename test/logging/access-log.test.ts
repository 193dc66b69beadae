import t from 'tap'
import { Writable } from 'node:stream'
import { createLogger } from '../../src/logger.js'
import { createAccessLog, type AccessRecord } from '../../src/ops/access-log.js'

function capture (): { stream: Writable, lines: string[] } {
  const lines: string[] = []
  const stream = new Writable({ write (chunk: Buffer, _enc, done) { lines.push(chunk.toString('utf8')); done() } })
  return { stream, lines }
}

/** The time is the only field that may differ between two lines written a moment apart. */
const sameTime = (line: string): string => line.replace(/"time":"[^"]*"/, '"time":"T"')

const base: AccessRecord = {
  reqId: '0b9f3a52-5f86-4f6e-9d5b-2f0c1c7e8a11', environment: 'sandbox', iface: 'fiat', method: 'GET', path: '/api/sandbox/b2b/v1/payouts', status: 200, retried: false, durationMs: 12.34, caller: 'anonymous',
}
const records: AccessRecord[] = [
  base,
  { ...base, environment: 'production', iface: 'crypto', method: 'POST', status: 502, retried: true, durationMs: 0, caller: 'payout-agent' },
  { ...base, reqId: 'app-123.abc:x@y', environment: null, method: 'OPTIONS', durationMs: Number.NaN },
  { ...base, path: '/api/b2b/say "hi"\\back\tand\u0001ctl' },
  { ...base, path: '/api/b2b/Zürich/東京/🚀' },
  { ...base, path: `/api/b2b/${'long-segment/'.repeat(20)}"quoted"` },
]

t.test('the access line is the line pino writes for the same fields', async (t) => {
  const ours = capture()
  const theirs = capture()
  const accessLog = createAccessLog(createLogger('info', ours.stream))
  const logger = createLogger('info', theirs.stream)
  for (const r of records) {
    accessLog(r)
    logger.child({ reqId: r.reqId }).info({
      environment: r.environment, interface: r.iface, method: r.method, path: r.path, status: r.status, retried: r.retried, durationMs: r.durationMs, caller: r.caller,
    }, 'proxied request')
  }
  t.equal(ours.lines.length, records.length)
  t.same(ours.lines.map(sameTime), theirs.lines.map(sameTime))
  for (const line of ours.lines) t.doesNotThrow(() => { JSON.parse(line) }, 'valid JSON')
})

// Node's HTTP parser reads a request target as latin1, so a path cannot hold one; were it to, the
// line escapes it as JSON.stringify does (pino writes it raw before Node 25).
t.test('a lone surrogate is escaped, not written raw', async (t) => {
  const ours = capture()
  createAccessLog(createLogger('info', ours.stream))({ ...base, path: '/a\ud800b' })
  t.match(ours.lines[0], '"path":"/a\\ud800b"')
  t.equal((JSON.parse(ours.lines[0] as string) as { path: string }).path, '/a\ud800b')
})

t.test('nothing is written when info is off', async (t) => {
  const ours = capture()
  const accessLog = createAccessLog(createLogger('warn', ours.stream))
  accessLog(base)
  t.same(ours.lines, [])
})
