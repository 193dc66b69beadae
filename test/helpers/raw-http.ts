/**
 * Sends bytes exactly as written over a plain TCP socket, so no HTTP client tidies up a hostile
 * path or header, and returns the parsed status line, headers and body of the first response.
 */
import { connect } from 'node:net'

export interface RawResponse { status: number, headers: Record<string, string>, body: string, raw: string }

export function rawRequest (port: number, request: string | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const timer = setTimeout(() => { socket.destroy(); reject(new Error('raw request timed out')) }, timeoutMs)
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', (err) => { clearTimeout(timer); reject(err) })
    socket.on('close', () => {
      clearTimeout(timer)
      const raw = Buffer.concat(chunks).toString('latin1')
      resolve(parseResponse(raw))
    })
    socket.write(request)
  })
}

/** `GET <target> HTTP/1.1` with loopback Host and Connection: close, plus extra header lines. */
export function get (target: string, extraHeaders: string[] = [], method = 'GET'): string {
  return [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...extraHeaders, '', ''].join('\r\n')
}

function parseResponse (raw: string): RawResponse {
  const end = raw.indexOf('\r\n\r\n')
  const head = end === -1 ? raw : raw.slice(0, end)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const i = line.indexOf(':')
    if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim()
  }
  let body = end === -1 ? '' : raw.slice(end + 4)
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body)
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body, raw }
}

function dechunk (body: string): string {
  let out = ''
  let rest = body
  for (;;) {
    const i = rest.indexOf('\r\n')
    if (i === -1) break
    const size = parseInt(rest.slice(0, i), 16)
    if (!Number.isFinite(size) || size === 0) break
    out += rest.slice(i + 2, i + 2 + size)
    rest = rest.slice(i + 2 + size + 2)
  }
  return out
}
