/**
 * Payments followed to their final state (SPEC §12) as a feature: their share of the proxy, the `payments` command and
 * their `check` section.
 */
import { configuredCommand, type Feature } from '../feature/feature.js'
import { resolvePayments } from '../config/payment-settings.js'

export const paymentsFeature: Feature = {
  name: 'payments',
  settings: ({ settings, variables, sealingSecret, problems, warnings }) => ({
    payments: resolvePayments(settings, variables, sealingSecret, problems, warnings),
  }),
  commands: {
    payments: configuredCommand(
      'list, show or recheck followed payments (payments-auth-proxy payments --help)',
      async () => (await import('./payments-command.js')).runPaymentsCommand,
      async () => (await import('./payments-command.js')).PAYMENTS_USAGE,
    ),
  },
  proxy: async (context) => {
    const settings = context.config.payments
    return settings === null ? null : await (await import('./payments-part.js')).paymentsPart(context, settings)
  },
  // Every event the inbox stores is read after the payments' own cursor, from before it takes any.
  async join (shared) {
    const running = shared.payments?.running
    const inbox = shared.inbox
    if (running === undefined || running === null || inbox === undefined) return
    inbox.onStored(running.wake)
    await running.readEvents(inbox.store)
  },
  async check ({ config, log, storage }) {
    const { payments } = config
    if (payments === null) return null
    return await (await import('./check-payments.js')).checkPayments({ ...config, payments }, { log, storage })
  },
}
