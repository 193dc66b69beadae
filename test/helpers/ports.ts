/**
 * Ports for tests that must name one before a process starts (a pinned listen address), and ports
 * held by a listener until the test ends (a port in use). Both on 127.0.0.1, chosen by the kernel.
 */
import { once } from 'node:events'
import type { Server as HttpServer } from 'node:http'
import { createServer, type Server } from 'node:net'
import type { Test } from 'tap'

/** A port free a moment ago: the kernel's choice, released at once. */
export async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** `server` (a bare TCP listener by default) listening on a fresh port until the test ends. */
export async function holdPort (t: Test, server: Server | HttpServer = createServer()): Promise<number> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.close() })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}
