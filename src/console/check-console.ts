/**
 * What `payments-auth-proxy check` says of the console (SPEC §14) when PROXY_CONSOLE_LISTEN is set:
 * its listen address, where people reach it, who signs in and how, who may decide.
 */
import type { ConsoleConfig } from '../config/console-settings.js'
import { listenProblem } from '../http/listen-check.js'

const CONSOLE_LISTEN = { host: 'PROXY_CONSOLE_LISTEN', port: 'PROXY_CONSOLE_LISTEN' }

/** Lines only: nothing here fails the check (a bad setting already stopped it at loading). */
export async function checkConsole (settings: ConsoleConfig): Promise<string[]> {
  const { host, port } = settings.listen
  const problem = await listenProblem(host, port, CONSOLE_LISTEN)
  // Taken is what `check` run beside the running sidecar sees; the sidecar's own start refuses a port truly taken.
  const listen = problem === null ? `ok    console: listen ${host}:${port} can be opened` : `warn  console: ${problem} (the sidecar itself, when check runs beside it)`
  const cidrs = (list: ConsoleConfig['allowedClients']): string => list.map((c) => `${c.address}/${c.prefix}`).join(', ')
  const header = settings.trustedProxies.length === 0 ? '' : `, or by the header ${settings.userHeader} from ${cidrs(settings.trustedProxies)}`
  const approvers = settings.approvers.length === 0
    ? 'warn  console: no PROXY_CONSOLE_APPROVERS: everyone who signs in reads only'
    : `ok    console: approvers ${settings.approvers.join(', ')}; everyone else reads only`
  return [
    `${listen}; people reach it at ${settings.publicUrl} (forms only from that Origin), cookies ${settings.secureCookies ? 'Secure' : 'not Secure (loopback)'}`,
    `ok    console: sign-in from ${cidrs(settings.allowedClients)} by link (payments-auth-proxy console-link --as <email>)${header}`,
    approvers,
  ]
}
