/**
 * `payments-auth-proxy console-link --as <email>` (SPEC §14): prints a sign-in link for the console,
 * good once within 10 minutes, on the store the running sidecar reads (the SQLite file at
 * PROXY_WEBHOOK_STORE_PATH, or Redis), so it works whether this runs beside the sidecar or in
 * another container on the same volume or Redis. The link is the only output on stdout: it can be
 * piped to whoever signs in; notes go to stderr.
 */
import { parseArgs } from 'node:util'
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import type { Storage } from '../storage/storage.js'
import { terminalText } from '../text/terminal-safe.js'
import { emailAddress, isApprover } from './approvers.js'
import { openSigninStore } from './open-signin-store.js'
import { issueSigninLink } from './signin-secrets.js'

export const CONSOLE_LINK_USAGE = 'usage: payments-auth-proxy console-link --as <email>'

export interface CommandIo { out: (text: string) => void, err: (text: string) => void, nowMs: () => number }

/** Returns the exit code: 0 printed, 2 usage or configuration. */
export async function runConsoleLinkCommand (args: readonly string[], config: Pick<Config, 'console'>, deps: { log: Logger, storage: Storage }, io: CommandIo): Promise<number> {
  const { log, storage } = deps
  let as: string | undefined
  try {
    as = parseArgs({ args: [...args], options: { as: { type: 'string' } } }).values.as
  } catch (err) {
    io.err(`payments-auth-proxy: ${terminalText((err as Error).message)}\n${CONSOLE_LINK_USAGE}\n`)
    return 2
  }
  if (config.console === null) {
    io.err(`payments-auth-proxy: the console is not configured (PROXY_CONSOLE_LISTEN and the other PROXY_CONSOLE_ settings of the sidecar)\n${CONSOLE_LINK_USAGE}\n`)
    return 2
  }
  const email = as === undefined ? null : emailAddress(as)
  if (email === null) {
    io.err(`payments-auth-proxy: --as needs the email address of the person who signs in\n${CONSOLE_LINK_USAGE}\n`)
    return 2
  }
  const store = await openSigninStore(config.console, storage, log)
  try {
    io.out(`${await issueSigninLink(store, config.console.publicUrl, email, io.nowMs())}\n`)
  } finally {
    await store.close()
  }
  const role = isApprover(config.console.approvers, email) ? 'may decide approvals (PROXY_CONSOLE_APPROVERS)' : 'read-only: not in PROXY_CONSOLE_APPROVERS'
  io.err(`payments-auth-proxy: a sign-in link for ${email}, good once within 10 minutes; ${role}\n`)
  return 0
}
