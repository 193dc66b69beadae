/**
 * The console's two secrets (SPEC §14): a sign-in link's, 256 random bits in the URL's fragment,
 * good once for 10 minutes; and a session's, in an HttpOnly cookie for 8 hours. Only their SHA-256
 * is stored (signin-store.ts), so a copy of the store, or of a backup, signs nobody in.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { SigninStore } from './signin-store.js'

export const LINK_TTL_MS = 10 * 60_000
export const SESSION_TTL_MS = 8 * 3_600_000
/** 32 bytes in base64url, without padding. */
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/

export function newSecret (): string {
  return randomBytes(32).toString('base64url')
}

/** Whether text could be one of our secrets: anything else is refused without a look in the store. */
export function secretShaped (text: string): boolean {
  return SECRET_SHAPE.test(text)
}

export function secretHash (secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

/** Stores a new link for `email` and returns its URL: `<public URL>/signin#<secret>`. */
export async function issueSigninLink (
  store: SigninStore,
  publicUrl: string,
  email: string,
  nowMs: number,
): Promise<string> {
  const secret = newSecret()
  await store.addLink(secretHash(secret), email, nowMs + LINK_TTL_MS, nowMs)
  return `${publicUrl}/signin#${secret}`
}
