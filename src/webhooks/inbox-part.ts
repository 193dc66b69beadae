/**
 * The webhook inbox beside the proxy (SPEC §10): its own listener, run in a thread of its own so its
 * garbage never pauses the proxy's loop, pacing its intake while the proxy is busy. Shared as
 * `inbox`: its store (read by the payments and the console), its deliverer's wake, and who to tell
 * when events were stored.
 */
import { systemClock } from '../clock.js'
import type { WebhookConfig } from '../config/webhook-config.js'
import type { SidecarContext, SidecarPart } from '../feature/feature.js'
import { INBOX_LISTEN } from '../http/listen-check.js'
import { createProxyActivity } from '../ops/proxy-activity.js'
import type { InboxStoreView, ThreadedInbox } from './inbox-thread.js'

export interface InboxShared {
  store: InboxStoreView
  deliverer: { wake: () => void }
  /** `listener` is called each time events were stored. */
  onStored: (listener: () => void) => void
}

declare module '../feature/feature.js' {
  interface SharedParts { inbox: InboxShared }
}

/** A store that cannot answer is shown as not ready, with nothing counted. */
const UNKNOWN = { ready: false, pending: 0, failed: 0, oldestPendingAgeSeconds: 0 }

export function inboxPart (context: SidecarContext, settings: WebhookConfig): SidecarPart {
  const { config, log, shared } = context
  const { host, port } = settings.listen
  let inbox: ThreadedInbox | null = null
  const stored: Array<() => void> = []
  const activity = createProxyActivity(systemClock)
  return {
    address: { host, port, settings: INBOX_LISTEN },
    readiness: { name: 'webhooks', read: async () => inbox === null ? UNKNOWN : await inbox.readiness().catch(() => UNKNOWN) },
    activity,
    async start (proxy) {
      const { startInboxThread } = await import('./inbox-thread.js')
      const started = await startInboxThread(settings, config.state, {
        logger: log,
        logLevel: config.logLevel,
        lines: context.lines,
        registry: proxy.registry,
        onStored: () => { for (const listener of stored) listener() },
        proxyActivity: activity.buffer,
      })
      inbox = started
      shared.inbox = {
        store: started.store,
        deliverer: started.deliverer,
        onStored: (listener) => { stored.push(listener) },
      }
    },
    async listen () {
      if (inbox === null) return
      const bound = await inbox.listen(host, port)
      log.info({ port: bound, path: '/webhooks/<redacted>' }, 'webhook inbox ready to accept events')
    },
    closeAllConnections: () => { inbox?.closeAllConnections() },
    close: async () => { await inbox?.close() },
  }
}
