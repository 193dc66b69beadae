/**
 * The fake provider's three ports from FAKE_PROVIDER_FIAT_PORT, _CRYPTO_PORT and _IP_PORT: its own
 * process (cli.ts, 4010/4020/4030 by default) and `npm run demo` (free ports unless pinned) read the
 * same variables.
 */

export const PROVIDER_PORT_VARIABLES = { fiatPort: 'FAKE_PROVIDER_FIAT_PORT', cryptoPort: 'FAKE_PROVIDER_CRYPTO_PORT', ipEchoPort: 'FAKE_PROVIDER_IP_PORT' } as const

export type ProviderPorts = Record<keyof typeof PROVIDER_PORT_VARIABLES, number>

/** Each variable's port, or `fallback`'s when unset or empty; throws naming a variable that is not a port. */
export function providerPorts (
  env: Readonly<Record<string, string | undefined>>,
  fallback: ProviderPorts,
): ProviderPorts {
  const read = (key: keyof ProviderPorts): number => {
    const name = PROVIDER_PORT_VARIABLES[key]
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback[key]
    const value = Number(raw)
    if (!/^\d+$/.test(raw) || value > 65535) throw new Error(`${name} must be a port number (0-65535), got "${raw}"`)
    return value
  }
  return { fiatPort: read('fiatPort'), cryptoPort: read('cryptoPort'), ipEchoPort: read('ipEchoPort') }
}
