/**
 * Where an event alone settles a payment (SPEC §12 "Settled by an event alone"): an interface that
 * has no look-up path (crypto without PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH, fiat with it `off`), or
 * every interface with PROXY_PAYMENTS_CONFIRM=event. Its payments are notified `"confirmed": false`;
 * `check` and the start say which interfaces these are, among those some environment reaches.
 */
import { INTERFACES, type Config, type InterfaceName } from '../config/config.js'
import type { PaymentsConfig } from '../config/payment-config.js'

export interface EventSettled { interface: InterfaceName, why: string }

export function eventSettledInterfaces (settings: Pick<PaymentsConfig, 'confirm' | 'lookupPaths'>, environments: Config['environments']): EventSettled[] {
  return INTERFACES.filter(
    (iface) => Object.values(environments).some((env) => env.baseUrls[iface] !== undefined),
  ).flatMap((iface) => {
    if (settings.lookupPaths[iface] === null) return [{ interface: iface, why: iface === 'fiat' ? 'PROXY_PAYMENTS_LOOKUP_PATH=off' : 'PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH unset' }]
    if (settings.confirm === 'event') return [{ interface: iface, why: 'PROXY_PAYMENTS_CONFIRM=event' }]
    return []
  })
}

const CONSEQUENCE = 'a forged event would too, so they are notified with "confirmed": false; release nothing on them without a check of your own'

export const EVENT_SETTLED_WARNING = `an event alone settles this interface's payments: ${CONSEQUENCE}`

export function eventSettledWarning (e: EventSettled): string {
  return `an event alone settles ${e.interface} payments (${e.why}): ${CONSEQUENCE}`
}
