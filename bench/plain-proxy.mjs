/**
 * Optional target (--with-plain): the stretch reference, plain node:http + an undici Pool,
 * header injection only. Drops hop-by-hop headers and streams both bodies; nothing else.
 * Prints `{"port": N}` when listening. Env: BENCH_UPSTREAM (origin), BENCH_BASE_PATH.
 */
import { createServer } from 'node:http'
import { Pool } from 'undici'

const pool = new Pool(process.env.BENCH_UPSTREAM, { connections: 64, keepAliveTimeout: 60_000 })
const base = process.env.BENCH_BASE_PATH ?? '/api/sandbox/b2b'
const PREFIX = '/fiat'
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'authorization'])

const server = createServer((req, res) => {
  if (!req.url.startsWith(`${PREFIX}/`)) { res.writeHead(404).end(); return }
  const headers = { authorization: 'Bearer bench-static' }
  for (const name in req.headers) if (!HOP.has(name)) headers[name] = req.headers[name]
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
  pool.request({ path: base + req.url.slice(PREFIX.length), method: req.method, headers, body: hasBody ? req : null }).then(({ statusCode, headers: upstreamHeaders, body }) => {
    for (const name of ['connection', 'keep-alive', 'transfer-encoding']) delete upstreamHeaders[name]
    res.writeHead(statusCode, upstreamHeaders)
    body.pipe(res)
  }, () => { if (!res.headersSent) res.writeHead(502).end(); else res.destroy() })
})
server.keepAliveTimeout = 65_000
server.listen(0, '127.0.0.1', () => { process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`) })
const close = () => { server.close(); server.closeAllConnections(); void pool.close() }
process.once('SIGTERM', close)
process.once('SIGINT', close)
