/**
 * The bridge (SPEC §13) while the proxy shuts down (SPEC §5): a tool call that makes its request
 * once the close began gets SHUTTING_DOWN, as a new HTTP request would, not an internal error.
 */
import Fastify from 'fastify'
import t from 'tap'
import { createInnerRequests } from '../../src/mcp/inner-request.js'
import { markToolCalls } from '../../src/mcp/tool-call-mark.js'
import type { InnerAnswer } from '../../src/mcp/tool-result.js'

t.test('a tool call\'s request once the close began is SHUTTING_DOWN', async (t) => {
  const app = Fastify()
  await app.register(markToolCalls)
  app.get('/', async (request) => ({ tool: request.toolCall?.tool }))
  const send = createInnerRequests(app)
  const origin = { authorization: undefined, remoteAddress: '127.0.0.1', host: 'localhost', requestId: 'r-1' }
  const call = { tool: 't', method: 'GET', target: '/', body: null }
  let during: Promise<InnerAnswer> | null = null
  app.addHook('preClose', async () => {
    during = send(origin, call)
    await during.catch(() => {})
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const answered = await send(origin, call)
  t.same([answered.status, JSON.parse(answered.body.toString())], [200, { tool: 't' }], 'while listening: dispatched and marked')
  await app.close()
  t.ok(during !== null, 'a call was made while closing')
  await t.rejects(during ?? Promise.resolve(), { code: 'SHUTTING_DOWN', statusCode: 503 })
})
