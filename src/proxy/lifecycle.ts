/**
 * The proxy's start and stop around Fastify's hooks: token sources, the egress report and the
 * features' workers start once it is ready; at close, requests are refused first (preClose), then
 * everything stops, the features after the core, and what the proxy opened itself is closed last.
 */
import type { FastifyInstance } from 'fastify'
import type { EgressReporter } from '../egress/egress-reporter.js'
import type { ProxyPart } from '../feature/feature.js'
import type { TokenSource } from '../tokens/token-source.js'

export interface Lifecycle {
  sources: ReadonlyMap<string, TokenSource>
  egress: EgressReporter
  parts: readonly ProxyPart[]
  /** Told once close begins: the refuse step answers SHUTTING_DOWN from then on. */
  closing: () => void
  /** What the proxy opened itself (not given by its caller), in the order to close it. */
  owned: ReadonlyArray<() => Promise<void>>
}

export function addLifecycle (app: FastifyInstance, { sources, egress, parts, closing, owned }: Lifecycle): void {
  app.addHook('onReady', async () => {
    for (const source of sources.values()) source.start()
    egress.start()
    for (const part of parts) part.start?.()
  })
  app.addHook('preClose', async () => {
    closing()
    for (const part of parts) await part.preClose?.()
  })
  app.addHook('onClose', async () => {
    for (const source of sources.values()) source.close()
    egress.close()
    for (const part of parts) await part.close?.()
    for (const close of owned) await close()
  })
}

/** SIGHUP for the features (each re-reads its files), and the watch of those files, which returns its stop. */
export function featureControls (parts: readonly ProxyPart[]): {
  reloadFeatures: (trigger: string) => void
  watchFeatures: () => () => void
} {
  return {
    reloadFeatures: (trigger) => { for (const part of parts) part.reload?.(trigger) },
    watchFeatures: () => {
      const stops = parts.flatMap((part) => part.watch === undefined ? [] : [part.watch()])
      return () => { for (const stop of stops) stop() }
    },
  }
}
