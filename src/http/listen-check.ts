/**
 * Whether the listen address can be opened, said in one line that names the variable to change.
 * `serve` and the demo ask before they start anything, so a taken port is not first seen as the
 * side effects of a half-started proxy (an aborted egress check, a stack trace); `check` asks too.
 * The answer can go stale before the real listen: that one's error gets the same sentence.
 */
import { createServer } from 'node:net'

/** The variables that set a listener's address: the proxy's by default, the inbox's when named. */
export interface ListenSettings { host: string, port: string }

const PROXY_LISTEN: ListenSettings = { host: 'PROXY_HOST', port: 'PROXY_PORT' }

/** The sentence for a listen error, or null when it is not about the address. */
export function describeListenError (err: unknown, host: string, port: number, settings: ListenSettings = PROXY_LISTEN): string | null {
  const code = (err as { code?: unknown } | null)?.code
  if (code === 'EADDRINUSE') return `port ${port} is in use (${settings.port})`
  if (code === 'EACCES') return `port ${port} needs privileges this user lacks (${settings.port}): use a port above 1023`
  if (code === 'EADDRNOTAVAIL') return `${host} is not an address of this machine (${settings.host})`
  return null
}

/** Opens and closes the address; null when it could be opened. Port 0 always can. */
export async function listenProblem (host: string, port: number, settings: ListenSettings = PROXY_LISTEN): Promise<string | null> {
  if (port === 0) return null
  const probe = createServer()
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject)
      probe.listen({ host, port, exclusive: true }, resolve)
    })
  } catch (err) {
    const sentence = describeListenError(err, host, port, settings)
    if (sentence !== null) return sentence
    throw err
  }
  await new Promise<void>((resolve) => { probe.close(() => { resolve() }) })
  return null
}
