/**
 * Raw-socket client for the hostile-input tests. Unlike test/helpers/raw-http.ts it resolves as soon
 * as one whole response has arrived (by Content-Length or the chunked terminator), not only when the
 * server closes, skips interim 1xx responses, and can bind the client end to another loopback
 * address (`localAddress`) to act as a client outside PROXY_ALLOWED_CLIENTS.
 */
import { connect, type Socket } from 'node:net'

export interface RawResponse { status: number, headers: Record<string, string>, body: string, raw: string }

export interface RawOptions { localAddress?: string, timeoutMs?: number }

export function exchange (port: number, request: string | Buffer, options: RawOptions = {}): Promise<RawResponse> {
  const socket = connect({ port, host: '127.0.0.1', localAddress: options.localAddress })
  socket.write(request)
  return readResponse(socket, options.timeoutMs).finally(() => socket.destroy())
}

/** The next whole final response on `socket` (or what came before the server closed it). */
export function readResponse (socket: Socket, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let raw = ''
    const finish = (err: Error | null): void => {
      clearTimeout(timer)
      socket.off('data', onData)
      const res = parse(raw)
      if (res !== null) resolve(res)
      else reject(err ?? new Error(`connection closed without a response (${raw.length} bytes)`))
    }
    const onData = (chunk: Buffer): void => {
      raw += chunk.toString('latin1')
      if (parse(raw, true) !== null) finish(null)
    }
    const timer = setTimeout(() => { finish(new Error('raw request timed out')) }, timeoutMs)
    socket.on('data', onData)
    socket.once('error', (err) => { finish(err) })
    socket.once('close', () => { finish(null) })
  })
}

/** A request line with loopback Host and extra header lines, optionally a body. */
export function request (method: string, target: string, headers: string[] = [], body = ''): string {
  return [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', ...headers, '', body].join('\r\n')
}

/** A connected socket and a promise of everything the server sent until it closed, with the time it took. */
export function open (port: number, localAddress?: string): { socket: Socket, closed: Promise<{ raw: string, afterMs: number }> } {
  const socket = connect({ port, host: '127.0.0.1', localAddress })
  const started = performance.now()
  let raw = ''
  socket.on('data', (chunk: Buffer) => { raw += chunk.toString('latin1') })
  const closed = new Promise<{ raw: string, afterMs: number }>((resolve) => {
    socket.on('error', () => {})
    socket.on('close', () => { resolve({ raw, afterMs: performance.now() - started }) })
  })
  return { socket, closed }
}

/** Every final response in `raw`, read from a pipelined connection whose bodies hold no status line. */
export function parseResponses (raw: string): RawResponse[] {
  return raw.split(/(?=HTTP\/1\.1 \d{3} )/).map((part) => parse(part)).filter((res): res is RawResponse => res !== null)
}

/** The first final (non-1xx) response in `raw`; with `complete`, null until its body is whole. */
function parse (raw: string, complete = false): RawResponse | null {
  let rest = raw
  for (;;) {
    const end = rest.indexOf('\r\n\r\n')
    if (end === -1) return null
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n')
    const status = Number(statusLine.split(' ')[1] ?? 0)
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const i = line.indexOf(':')
      if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim()
    }
    const bodyText = rest.slice(end + 4)
    if (status >= 100 && status < 200) {
      rest = bodyText
      continue
    }
    const length = headers['content-length']
    if (headers['transfer-encoding'] === 'chunked') {
      const body = dechunk(bodyText)
      if (body === null && complete) return null
      return { status, headers, body: body ?? bodyText, raw }
    }
    if (length !== undefined) {
      if (complete && bodyText.length < Number(length)) return null
      return { status, headers, body: bodyText.slice(0, Number(length)), raw }
    }
    return complete ? null : { status, headers, body: bodyText, raw }
  }
}

/** The decoded body, or null while the last chunk has not arrived. */
function dechunk (body: string): string | null {
  let out = ''
  let rest = body
  for (;;) {
    const i = rest.indexOf('\r\n')
    if (i === -1) return null
    const size = parseInt(rest.slice(0, i), 16)
    if (!Number.isFinite(size)) return null
    if (size === 0) return out
    if (rest.length < i + 2 + size + 2) return null
    out += rest.slice(i + 2, i + 2 + size)
    rest = rest.slice(i + 2 + size + 2)
  }
}
