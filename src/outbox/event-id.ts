/** The sidecar's own event id (SPEC §10): `msg_` and 128 random bits, the same on every attempt and replay. */
import { randomBytes } from 'node:crypto'

export function newEventId (): string {
  return `msg_${randomBytes(16).toString('base64url')}`
}
