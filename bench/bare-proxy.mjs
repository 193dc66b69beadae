/**
 * Target (b): the framework floor. Fastify 5 + @fastify/http-proxy with their default options,
 * logger off, doing nothing but what our proxy must do at least: map the route prefix onto the
 * upstream's base path and inject an Authorization header (a static token: no token logic).
 * Prints `{"port": N}` when listening. Env: BENCH_UPSTREAM (origin), BENCH_BASE_PATH.
 */
import Fastify from 'fastify'
import httpProxy from '@fastify/http-proxy'

const app = Fastify({ logger: false })
await app.register(httpProxy, {
  upstream: process.env.BENCH_UPSTREAM,
  prefix: '/fiat',
  rewritePrefix: process.env.BENCH_BASE_PATH ?? '/api/sandbox/b2b',
  replyOptions: {
    rewriteRequestHeaders: (_request, headers) => ({ ...headers, authorization: 'Bearer bench-static' }),
  },
})
await app.listen({ host: '127.0.0.1', port: 0 })
process.stdout.write(`${JSON.stringify({ port: app.server.address().port })}\n`)
const close = () => { app.close().catch(() => process.exit(1)) }
process.once('SIGTERM', close)
process.once('SIGINT', close)
