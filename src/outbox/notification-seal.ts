/**
 * Sealed notifications (SPEC §12 "Sealed": "nothing a person or the application is told about a
 * payment comes from an unsealed byte"): a notification outbox given a seal key stores, beside each
 * notification, a seal over its key (type and subject) and its body, in a header of its own that is
 * never sent; before each attempt the deliverer checks it, and one that does not verify (an edited
 * body, type or key, a seal moved from another notification, none) is failed at once, never sent.
 *
 * Only the content type and Standard Webhooks' own headers are sent with a sealed notification.
 * What the seal cannot do: a whole notification copied back as it was is a true one, and its
 * `webhook-id`, which the store gives it, is not covered: a copy stored under another id would be
 * sent again under that id (receivers de-duplicate on the payment id and type as well).
 */
import { deriveSealKey, sameSeal, seal, type SealKey } from '../sealing/seal-mac.js'
import type { ClaimedEvent } from './outbox-store.js'

/** Stored with the notification and taken off before it is sent. */
export const SEAL_HEADER = 'x-payments-auth-proxy-seal'

const LABEL = 'payments-auth-proxy notification seal v1'

export function deriveNotificationSealKey (sealingSecret: string): SealKey {
  return deriveSealKey(sealingSecret, LABEL)
}

function covered (key: SealKey, storedKey: string, body: Buffer): string {
  return seal(key, ['notification', storedKey, body.toString('base64')])
}

export function sealNotification (key: SealKey, storedKey: string, body: Buffer): [string, string] {
  return [SEAL_HEADER, covered(key, storedKey, body)]
}

export function vetNotification (key: SealKey): (event: ClaimedEvent) => ClaimedEvent | { refused: string } {
  return (event) => {
    const seals = event.headers.filter(([name]) => name.toLowerCase() === SEAL_HEADER)
    if (seals.length !== 1) return { refused: seals.length === 0 ? 'seal missing' : 'more than one seal' }
    if (!sameSeal(covered(key, event.key, event.body), seals[0]?.[1])) return { refused: 'seal' }
    // What is sent besides the body is ours alone, never a header or a conflict mark read from the outbox.
    return { ...event, headers: [['content-type', 'application/json']], conflictWith: null }
  }
}
