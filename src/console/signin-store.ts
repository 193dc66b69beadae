/**
 * Where the console's sign-in links and sessions live (SPEC §14), kept by two implementations like
 * the approvals' store: the embedded SQLite file (PROXY_WEBHOOK_STORE_PATH) or Redis (replicas). The
 * `console-link` command writes a link from another process and the running sidecar takes it, so
 * both must reach one store; a session survives a restart and is good on every replica. Only
 * SHA-256 hashes of a link's secret and of a session's cookie are stored: reading the store signs
 * nobody in.
 */

export type LinkOutcome =
  | { kind: 'signed-in', email: string }
  /** Taken before: the second use of a link (logged at warn). */
  | { kind: 'used', email: string }
  | { kind: 'expired', email: string }
  | { kind: 'unknown' }

export interface ConsoleSession {
  email: string
  /** The CSRF secret of this session (@fastify/csrf-protection's, kept server-side with the session). */
  csrfSecret: string
  expiresAtMs: number
}

/**
 * A used or expired link is remembered this long past its expiry, so that a late second use is told apart from a
 * made-up one.
 */
export const USED_LINK_KEPT_MS = 24 * 3_600_000

export interface SigninStore {
  /** `nowMs`: links and sessions past their time are removed meanwhile (SQLite; Redis lets keys expire). */
  addLink: (hash: string, email: string, expiresAtMs: number, nowMs: number) => Promise<void>
  /** Takes a link once: of two uses at once, one signs in and the other finds it used. */
  useLink: (hash: string, nowMs: number) => Promise<LinkOutcome>
  addSession: (hash: string, session: ConsoleSession, nowMs: number) => Promise<void>
  /** The session while it lasts, else null. */
  session: (hash: string, nowMs: number) => Promise<ConsoleSession | null>
  endSession: (hash: string) => Promise<void>
  close: () => Promise<void>
}
