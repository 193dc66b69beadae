/**
 * The sealing secret (SPEC §11 "Sealed records", §12 "Sealed"): one key, no notification receiver's,
 * that seals approval and payment records so that write access to the store is not the power to pay
 * or to settle. `PROXY_SEALING_SECRET` names it for every record; `PROXY_APPROVAL_SEALING_SECRET`,
 * its first name, is still read. Both set to different keys is refused, naming both: which one
 * sealed the records already stored cannot be guessed. Values are never quoted in a problem.
 */
import { keyReadings } from './distinct-secrets.js'
import type { RawSettings } from './schema.js'
import { readSecretVariable } from './secrets.js'
import { isSigningSecret } from './webhook-settings.js'

export const SEALING_SECRET_NAMES = 'PROXY_SEALING_SECRET (or PROXY_APPROVAL_SEALING_SECRET, or either with _FILE)'

export function resolveSealingSecret (settings: RawSettings, problems: string[]): string | null {
  const general = whsecSecret(settings, 'PROXY_SEALING_SECRET', problems)
  const approvals = whsecSecret(settings, 'PROXY_APPROVAL_SEALING_SECRET', problems)
  if (general !== null &&
    approvals !== null &&
    ![...keyReadings(general)].some((reading) => keyReadings(approvals).has(reading))) {
    problems.push('PROXY_SEALING_SECRET and PROXY_APPROVAL_SEALING_SECRET are both set, to different keys: they name one sealing secret, so set one of them')
    return null
  }
  return general ?? approvals
}

/** A `whsec_` secret of its own (distinct-secrets.ts checks it differs from every other). */
export function whsecSecret (settings: RawSettings, name: string, problems: string[]): string | null {
  const read = readSecretVariable(settings, name)
  if (read.problem !== undefined) {
    problems.push(read.problem)
    return null
  }
  if (read.value !== undefined && !isSigningSecret(read.value)) {
    problems.push(`${name} must be whsec_ followed by base64 of at least 24 bytes (payments-auth-proxy webhook-secrets prints one)`)
    return null
  }
  return read.value ?? null
}
