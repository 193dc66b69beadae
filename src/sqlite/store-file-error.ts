/**
 * The one sentence for a store file that cannot be opened, whichever store it is (the inbox's,
 * the approvals', the payments', their notifications', the console's sign-ins): the operator reads
 * one line naming the variable, never a stack.
 */
import { OperatorError } from '../operator-error.js'

/**
 * Opens with `open`; a failure becomes an OperatorError naming `where` (e.g.
 * `PROXY_WEBHOOK_STORE_PATH=/data/webhooks.db`).
 */
export async function openStoreFile<T> (what: string, where: string, open: () => Promise<T>): Promise<T> {
  try {
    return await open()
  } catch (err) {
    if (err instanceof OperatorError) throw err
    const code = (err as { code?: unknown }).code
    throw new OperatorError(`the ${what} store ${where} cannot be opened (${typeof code === 'string' ? `${code}: ` : ''}${(err as Error).message}); its directory must exist or be creatable, on a writable volume, and be writable by this user`, { cause: err })
  }
}
