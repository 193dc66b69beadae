/**
 * Plumbing shared by the fake's three node:http servers: plain node:http rather than Fastify keeps
 * the fake independent of the code under test.
 */

import http from 'node:http'

export type RequestHandler = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>

/**
 * Every response carries a `Date` from the provider clock, because that header is how the proxy
 * judges clock skew. A handler failure becomes a 500 (or a dropped socket once headers are out)
 * instead of an unhandled rejection that would take the test process down.
 */
export function createServer (handler: RequestHandler, now: () => number): http.Server {
  return http.createServer((req, res) => {
    res.setHeader('date', new Date(now()).toUTCString())
    handler(req, res).catch(() => {
      if (res.headersSent) res.destroy()
      else sendJson(res, 500, { success: false, message: 'Internal error' })
    })
  })
}

export function readBody (req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

export function sendJson (
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  const payload = JSON.stringify(body)
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) })
  res.end(payload)
}

/** Resolves with the bound port, which is the point of asking for port 0. */
export function listen (server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      const address = server.address()
      if (address === null || typeof address === 'string') reject(new Error('server has no TCP address'))
      else resolve(address.port)
    })
  })
}

/** Destroys keep-alive and in-flight sockets too: a test's teardown must never wait on a client. */
export function closeServer (server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
}
