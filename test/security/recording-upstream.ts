/**
 * A stand-in upstream that records what the fake provider cannot: every TCP connection the proxy
 * opens, and each request from the moment its headers arrive, with how many body bytes came and
 * whether the body ended or was cut off. Used as the crypto base URL (the fake provider keeps the
 * fiat base, so tokens still come from its token endpoint) for the body and timeout rows.
 */
import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { Test } from 'tap'

export interface RecordedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  bytes: number
  sha256: string | null
  /** 'open' while the body is arriving, then 'complete' or 'aborted'. */
  state: 'open' | 'complete' | 'aborted'
}

export interface RecordingUpstream {
  /** `http://127.0.0.1:<port>/api`, a crypto production base (sandbox derived: `/api/sandbox`). */
  baseUrl: string
  connections: number
  requests: RecordedRequest[]
  /** Resolves when the n-th request (1-based) has settled (complete or aborted). */
  settled(n: number): Promise<RecordedRequest>
}

export async function startRecordingUpstream (t: Test): Promise<RecordingUpstream> {
  const waiters: Array<{ n: number, resolve: (r: RecordedRequest) => void }> = []
  const notify = (): void => {
    for (const w of [...waiters]) {
      const r = upstream.requests[w.n - 1]
      if (r !== undefined && r.state !== 'open') {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(r)
      }
    }
  }
  const server = createServer((req, res) => {
    const record: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, bytes: 0, sha256: null, state: 'open' }
    upstream.requests.push(record)
    const hash = createHash('sha256')
    req.on('data', (chunk: Buffer) => { record.bytes += chunk.length; hash.update(chunk) })
    req.on('end', () => {
      record.state = 'complete'
      record.sha256 = hash.digest('hex')
      notify()
      const body = JSON.stringify({ bytes: record.bytes, sha256: record.sha256 })
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
      res.end(body)
    })
    req.on('close', () => {
      if (record.state === 'open') {
        record.state = 'aborted'
        notify()
      }
    })
  })
  server.on('connection', () => { upstream.connections++ })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections() }))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('recording upstream did not listen on TCP')
  const upstream: RecordingUpstream = {
    baseUrl: `http://127.0.0.1:${address.port}/api`,
    connections: 0,
    requests: [],
    settled: (n) => new Promise((resolve) => { waiters.push({ n, resolve }); notify() }),
  }
  return upstream
}
