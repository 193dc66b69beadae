/**
 * Ports for tests that must name one before a process starts (a pinned listen address), and ports
 * held by a listener until the test ends (a port in use). Both on 127.0.0.1.
 */
import { once } from 'node:events'
import type { Server as HttpServer } from 'node:http'
import { createServer, type Server } from 'node:net'
import type { Test } from 'tap'

/**
 * A port free a moment ago, below the kernel's ephemeral range (32768 and up on Linux). A port the
 * kernel picks for a listener comes from that range, and once released it can be handed at once to
 * an outgoing connection of any test running beside this one (the suite runs files in parallel):
 * the process told to listen there then finds it in use, and a client reconnecting to it may
 * connect to itself. Listeners of other tests take port 0, so only another freePort may pick the
 * same one, and at random that is rare.
 */
export async function freePort (): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    const server = createServer()
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => { resolve(false) })
      server.listen(port, '127.0.0.1', () => { resolve(true) })
    })
    if (!bound) continue
    server.close()
    await once(server, 'close')
    return port
  }
  throw new Error('no free port below the ephemeral range')
}

/** `count` ports free a moment ago and distinct from one another: two freePort calls can pick the same one. */
export async function freePorts (count: number): Promise<number[]> {
  const ports = new Set<number>()
  while (ports.size < count) ports.add(await freePort())
  return [...ports]
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
