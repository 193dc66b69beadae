/**
 * Lingering close (SPEC §5 "HTTP edges"), as nginx and HAProxy do it: when the proxy answers before
 * it has read the whole request (413, 431, 400, 408, 417), closing at once would let the kernel
 * answer the client's unread bytes with a reset, and most clients then report the reset instead of
 * our answer. So the write side is ended after the answer, the client's further input is read and
 * thrown away (never parsed, never buffered), and the socket is destroyed when the client closes,
 * goes quiet, or the total bound runs out, whichever comes first: bounded in time, not bytes.
 */
import type { Socket } from 'node:net'

export interface LingerBounds {
  /** The longest a socket lingers in all (nginx `lingering_time`, 30 s). */
  totalMs: number
  /** Closed once the client has sent nothing for this long (nginx `lingering_timeout`, 5 s). */
  idleMs: number
}

export const DEFAULT_LINGER: LingerBounds = { totalMs: 30_000, idleMs: 5_000 }

const lingering = new WeakSet<Socket>()

/** Stops parsing `socket`, ends its write side once `answer` (if any) is written, and discards input until a bound. */
export function lingerAndClose (socket: Socket, bounds: LingerBounds, answer?: string): void {
  if (lingering.has(socket)) return
  lingering.add(socket)
  // The HTTP parser's listeners go: nothing after the refused request is parsed (no smuggled second request).
  socket.removeAllListeners('data')
  socket.removeAllListeners('end')
  socket.removeAllListeners('timeout')
  socket.on('error', () => { socket.destroy() })
  const destroy = (): void => { socket.destroy() }
  const total = setTimeout(destroy, bounds.totalMs)
  total.unref()
  socket.setTimeout(bounds.idleMs, destroy)
  socket.once('close', () => { clearTimeout(total) })
  socket.on('end', destroy)
  socket.on('data', () => {})
  socket.resume()
  if (socket.destroyed) return
  if (answer === undefined) socket.end()
  else socket.end(answer)
}

/**
 * For answers written through a response object (a 413 from a route): Node ends such a response
 * with `socket.destroySoon()`, which turns unread input into a reset; this socket lingers instead.
 */
export function lingerAfterResponse (socket: Socket, bounds: LingerBounds): void {
  socket.destroySoon = () => { lingerAndClose(socket, bounds) }
}
