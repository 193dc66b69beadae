/**
 * The console's capabilities from the running sidecar's parts: what the other features shared
 * (approvals with its worker's nudge, the inbox's store and deliverer, the payments' chase), the
 * token sources' status and the egress IP. Loaded only when PROXY_CONSOLE_LISTEN is set.
 */
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import type { ConsoleConfig } from '../config/console-settings.js'
import type { BuiltProxy, SharedParts } from '../feature/feature.js'
import type { Storage } from '../storage/storage.js'
import { buildConsole, type Console } from './console-server.js'

export async function setUpConsole (settings: ConsoleConfig, state: Config['state'], parts: { logger: Logger, storage: Storage, proxy: Pick<BuiltProxy, 'sources' | 'egress'>, shared: Partial<SharedParts> }): Promise<Console> {
  const { proxy, shared } = parts
  const inbox = shared.inbox
  return await buildConsole(settings, state, {
    logger: parts.logger,
    storage: parts.storage,
    approvals: shared.approvals ?? null,
    inbox: inbox === undefined ? null : { store: inbox.store, wake: inbox.deliverer.wake },
    payments: shared.payments?.running?.chase ?? null,
    status: {
      tokens: () => [...proxy.sources].map(([environment, source]) => ({ environment, ...source.status() })),
      egressIp: () => proxy.egress.current(),
    },
  })
}
