/**
 * The tool-call mark (SPEC §13 audit) is handed over only within the synchronous dispatch of the
 * inner request, which must claim it: never visible outside, an unclaimed hand-over is an error.
 */
import t from 'tap'
import { runAsToolCall, toolCallTarget } from '../../src/mcp/tool-call-mark.js'

t.test('the mark is handed over only within a dispatch that claims it', async (t) => {
  t.equal(toolCallTarget(), undefined, 'nothing outside a tool call')
  t.throws(() => runAsToolCall({ tool: 'x', target: '/fiat/x' }, () => { t.equal(toolCallTarget(), '/fiat/x', 'the target while dispatching') }), /not dispatched at once/, 'a dispatch that did not claim it is an error')
  t.equal(toolCallTarget(), undefined, 'and nothing after it')
})
