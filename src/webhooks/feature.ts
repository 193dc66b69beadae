/** The webhook inbox (SPEC §10) as a feature: its listener beside the proxy, its commands and its `check` section. */
import type { Feature } from '../feature/feature.js'
import { resolveWebhooks } from '../config/webhook-settings.js'

export const inboxFeature: Feature = {
  name: 'inbox',
  settings: ({ settings, variables, problems, warnings }) => ({
    webhooks: resolveWebhooks(settings, variables, problems, warnings),
  }),
  commands: {
    webhooks: {
      summary: 'list, show or replay the webhook inbox\'s events (payments-auth-proxy webhooks --help)',
      usage: async () => (await import('./webhooks-command.js')).WEBHOOKS_USAGE,
      async run ({ args, io, clock, configured }) {
        const { config, log, storage } = configured()
        const { runWebhooksCommand, WEBHOOKS_USAGE } = await import('./webhooks-command.js')
        if (config.webhooks === null) {
          io.err(`payments-auth-proxy: the webhook inbox is not configured (PROXY_WEBHOOK_LISTEN and the other PROXY_WEBHOOK_ settings of the sidecar)\n${WEBHOOKS_USAGE}\n`)
          return 2
        }
        return await runWebhooksCommand(args, config.webhooks, { storage, log }, { ...io, nowMs: () => clock.wallMs() })
      },
    },
    'webhook-secrets': {
      summary: 'print a new webhook path token and signing secret',
      async run ({ io }) {
        io.out((await import('./webhook-secrets-command.js')).webhookSecretsReport())
        return 0
      },
    },
  },
  sidecar: async (context) => {
    const settings = context.config.webhooks
    return settings === null ? null : (await import('./inbox-part.js')).inboxPart(context, settings)
  },
  async check ({ config, log, redisFinding, storage }) {
    const { webhooks } = config
    if (webhooks === null) return null
    return await (await import('./check-inbox.js')).checkInbox(webhooks, config, { log, storage }, redisFinding)
  },
}
