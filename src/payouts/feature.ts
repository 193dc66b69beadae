/**
 * Payouts that cannot double, and budgets that count what was paid (SPEC §16), as a feature: the
 * `PROXY_DUPLICATE_*` settings, the probable-duplicate check on followed payments, and the limits
 * an agent can read. A failed payment's amount is given back by the payments themselves (§12's
 * worker settles it).
 */
import { resolveDuplicates } from '../config/duplicate-settings.js'
import type { Feature } from '../feature/feature.js'

export const payoutsFeature: Feature = {
  name: 'payouts',
  settings: ({ settings, variables, problems, warnings }) => ({
    duplicates: resolveDuplicates(settings, variables, problems, warnings),
  }),
  proxy: async (context) => await (await import('./payouts-part.js')).payoutsPart(context),
}
