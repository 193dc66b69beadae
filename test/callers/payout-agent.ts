/**
 * The callers file of the amount tests: one agent allowed sandbox fiat payouts, at most 100 KES
 * (or 0.3 USD) a request and 500 KES (0.3 USD) a UTC day.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { keySha256 } from '../../src/callers/judge-caller.js'

export function payoutAgentCallersFile (id: string, key: string): string {
  const file = join(mkdtempSync(join(tmpdir(), `${id}-`)), 'callers.yaml')
  writeFileSync(file, `callers:
  - id: ${id}
    keySha256: ${keySha256(key)}
    allow: [{ environments: [sandbox], interfaces: [fiat], methods: [POST], paths: ["/payouts/**"] }]
    amountLimits:
      - amount: /amount
        currency: /currency
        perRequest: { KES: 100, USD: "0.3" }
        perDay: { KES: 500, USD: "0.3" }
`)
  return file
}
