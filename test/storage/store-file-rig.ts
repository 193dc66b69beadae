/**
 * The sidecar with every store on one SQLite file (PROXY_WEBHOOK_STORE_PATH): the inbox's events,
 * approvals (the agent held above 100 KES), followed payments and the console's sign-in links. What
 * make-store-file.ts writes with a build, and store-file-upgrade.test.ts opens with this one.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Test } from 'tap'
import { keySha256 } from '../../src/callers/judge-caller.js'
import { SIGNING_SECRET as APPROVAL_SIGNING_SECRET } from '../approvals/approvals-harness.js'
import { freePort } from '../console/console-rig.js'
import { AGENT_A_KEY as AGENT_KEY, setting, type Setting } from '../payments/payments-harness.js'

export { AGENT_KEY }
export const APPROVER_EMAIL = 'ann@example.com'
/** The files a store directory holds once every store wrote: the shared file and the payments' notifications. */
export const STORE_FILES = ['webhooks.db', 'payment-notifications.db']

export async function everyStore (t: Test, dir: string): Promise<Setting> {
  const base = await setting(t)
  const env = {
    ...base.env,
    PROXY_WEBHOOK_STORE_PATH: join(dir, 'webhooks.db'),
    PROXY_CALLERS_FILE: callersFile(dir),
    PROXY_APPROVAL_SIGNING_SECRET: APPROVAL_SIGNING_SECRET,
    PROXY_CONSOLE_LISTEN: `127.0.0.1:${await freePort()}`,
    PROXY_CONSOLE_APPROVERS: APPROVER_EMAIL,
  }
  return { ...base, env }
}

/** The agent's payouts are followed; above 100 KES a person decides. */
function callersFile (dir: string): string {
  const file = join(dir, 'callers.yaml')
  writeFileSync(file, `callers:
  - id: agent-a
    keySha256: ${keySha256(AGENT_KEY)}
    allow: [{}]
    amountLimits:
      - paths: ["/v1/payouts"]
        amount: /amount
        currency: /currency
        perRequest: { KES: 1000 }
        approveAbove: { KES: 100 }
`)
  return file
}
