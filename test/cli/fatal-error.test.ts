/**
 * Issue 35 item 5: no command prints bundle source. Node's default report of an uncaught error
 * quotes the throwing line, which in the whitespace-minified bundle is hundreds of KB; the CLI's
 * report is bounded and masks URL credentials.
 */
import t from 'tap'
import { describeFatal, FATAL_MESSAGE_MAX_CHARS, FATAL_STACK_FRAMES } from '../../src/fatal-error.js'

t.test('an error with a huge message and a deep stack is reported in a few bounded lines', async (t) => {
  const err = new Error(`select NaN ${'x'.repeat(200_000)}`)
  err.stack = `Error: ${err.message}\n${Array.from({ length: 50 }, (_, i) => `    at f${i} (file:///app/dist-bundle/cli.mjs:1:${i * 1000})`).join('\n')}`
  const report = describeFatal(err)
  const lines = report.split('\n')
  t.equal(lines.length, 1 + FATAL_STACK_FRAMES, 'the head and a bounded number of frames')
  t.ok(report.length < FATAL_MESSAGE_MAX_CHARS + FATAL_STACK_FRAMES * 220, `bounded (${report.length} characters)`)
  t.match(lines[0], /^Error: select NaN x+… \(\d+ more characters\)$/)
})

t.test('the code is named and URL credentials are masked', async (t) => {
  const err = Object.assign(new Error('connect to redis://:pw-marker-Zq81@redis.internal:6379/0 failed'), { code: 'ECONNREFUSED' })
  const report = describeFatal(err)
  t.match(report, /^Error ECONNREFUSED: connect to redis:\/\/\*\*\*@redis\.internal:6379\/0 failed/)
  t.notMatch(report, 'pw-marker-Zq81')
})

t.test('a thrown non-Error is still described', async (t) => {
  t.match(describeFatal('boom'), /^Error: boom/)
  t.match(describeFatal(42), /^Error: a non-Error value was thrown/)
})
