/**
 * The console's capabilities from the running sidecar's parts, for cli.ts: the proxy's approvals
 * (with its worker's nudge), the inbox's store and deliverer, the token sources' status and the
 * egress IP. Loaded only when PROXY_CONSOLE_LISTEN is set.
 */
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import type { ConsoleConfig } from '../config/console-settings.js'
import type { ProxyServer } from '../server.js'
import type { ConsoleInbox, ConsolePayments } from './console-deps.js'
import { buildConsole, type Console } from './console-server.js'

/** The running inbox (webhooks/inbox-thread.ts, or buildInbox in the demo): its store's reads and its deliverer's wake. */
export interface RunningInbox { store: ConsoleInbox['store'], deliverer: { wake: () => void } }

export async function setUpConsole (settings: ConsoleConfig, state: Config['state'], parts: { logger: Logger, proxy: ProxyServer, inbox: RunningInbox | null, payments?: ConsolePayments | null }): Promise<Console> {
  const { proxy, inbox } = parts
  return await buildConsole(settings, state, {
    logger: parts.logger,
    approvals: proxy.approvals,
    inbox: inbox === null ? null : { store: inbox.store, wake: inbox.deliverer.wake },
    payments: parts.payments ?? null,
    status: {
      tokens: () => [...proxy.sources].map(([environment, source]) => ({ environment, ...source.status() })),
      egressIp: () => proxy.egress.current(),
    },
  })
}
