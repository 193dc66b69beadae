/**
 * Whether the listen address can be opened, said in one line that names the variable to change.
 * `serve` and the demo ask before they start anything, so a taken port is not first seen as the
 * side effects of a half-started proxy (an aborted egress check, a stack trace); `check` asks too,
 * for the proxy's listener and the inbox's. The answer can go stale before the real listen: that
 * one's error gets the same sentence.
 */
import { get } from 'node:http'
import { createServer, isIP } from 'node:net'

/** The variables that set a listener's address: the proxy's by default, the inbox's when named. */
export interface ListenSettings { host: string, port: string }

const PROXY_LISTEN: ListenSettings = { host: 'PROXY_HOST', port: 'PROXY_PORT' }
/** The webhook inbox's address is one variable, `host:port`. */
export const INBOX_LISTEN: ListenSettings = { host: 'PROXY_WEBHOOK_LISTEN', port: 'PROXY_WEBHOOK_LISTEN' }

export interface ListenAddress { host: string, port: number }

/** The sentence for a listen error, or null when it is not about the address. */
export function describeListenError (
  err: unknown,
  host: string,
  port: number,
  settings: ListenSettings = PROXY_LISTEN,
): string | null {
  const code = (err as { code?: unknown } | null)?.code
  if (code === 'EADDRINUSE') return `port ${port} is in use (${settings.port})`
  if (code === 'EACCES') return `port ${port} needs privileges this user lacks (${settings.port}): use a port above 1023`
  if (code === 'EADDRNOTAVAIL') return `${host} is not an address of this machine (${settings.host})`
  return null
}

/** Opens and closes the address; null when it could be opened. Port 0 always can. */
export async function listenProblem (
  host: string,
  port: number,
  settings: ListenSettings = PROXY_LISTEN,
): Promise<string | null> {
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

/**
 * Whether two of this process's listeners would want one port, so that the second listen fails:
 * the same port on the same address, or on an address the other's wildcard covers (`::` takes
 * every address, IPv4 ones too; `0.0.0.0` every IPv4 one). Port 0 is a fresh port each time.
 */
export function sharePort (a: ListenAddress, b: ListenAddress): boolean {
  if (a.port === 0 || a.port !== b.port) return false
  const covers = (wildcard: string, other: string): boolean => wildcard === '::' || (wildcard === '0.0.0.0' && isIP(other) === 4)
  return a.host === b.host || covers(a.host, b.host) || covers(b.host, a.host)
}

/**
 * `check`'s line for a listen address, under `label`. A taken port fails, unless what holds it
 * answers /healthz: then this is most likely `check` run beside the sidecar it checks (kubectl exec,
 * docker-compose exec), which must not fail for that.
 */
export async function listenReport (
  label: string,
  address: ListenAddress,
  settings: ListenSettings = PROXY_LISTEN,
): Promise<{ ok: boolean, line: string }> {
  const { host, port } = address
  const problem = await listenProblem(host, port, settings)
  if (problem === null) return { ok: true, line: `ok    ${label}: ${host}:${port} can be opened` }
  if (await answersHealthz(host, port)) return { ok: true, line: `warn  ${label}: ${problem}, by a server that answers /healthz (the proxy already running, when check runs beside it)` }
  return { ok: false, line: `FAIL  ${label}: ${problem}` }
}

function answersHealthz (host: string, port: number): Promise<boolean> {
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  return new Promise((resolve) => {
    const req = get({ host: target, port, path: '/healthz', timeout: 1000 }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => { resolve(res.statusCode === 200 && body.includes('"status":"ok"')) })
      res.on('error', () => { resolve(false) })
    })
    req.on('timeout', () => { req.destroy() })
    req.on('error', () => { resolve(false) })
  })
}
