/**
 * The console beside the proxy (SPEC §14), loaded only when PROXY_CONSOLE_LISTEN is set: its own
 * listener, deciding with what the other features shared (approvals, the inbox, the payments).
 */
import type { ConsoleConfig } from '../config/console-settings.js'
import type { SidecarContext, SidecarPart } from '../feature/feature.js'
import type { ListenSettings } from '../http/listen-check.js'
import type { Console } from './console-server.js'

/** The console's listen address is one variable, `host:port`. */
const CONSOLE_LISTEN: ListenSettings = { host: 'PROXY_CONSOLE_LISTEN', port: 'PROXY_CONSOLE_LISTEN' }

export function consolePart (context: SidecarContext, settings: ConsoleConfig): SidecarPart {
  const { config, log, shared, storage } = context
  const { host, port } = settings.listen
  let app: Console['app'] | null = null
  return {
    address: { host, port, settings: CONSOLE_LISTEN },
    async start (proxy) {
      const { setUpConsole } = await import('./console-setup.js')
      app = (await setUpConsole(settings, config.state, { logger: log, storage, proxy, shared })).app
    },
    async listen () {
      if (app === null) return
      await app.listen({ host, port })
      log.info({ url: settings.publicUrl }, 'console ready: payments-auth-proxy console-link --as <email> prints a sign-in link')
    },
    closeAllConnections: () => { app?.server.closeAllConnections() },
    close: async () => { await app?.close() },
  }
}
