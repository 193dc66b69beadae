/**
 * Token endpoint faults for the resilience tests, each counting how many token requests the
 * provider had open at once: "at most one in flight" is checked where the requests arrive.
 */
import type { FakeProvider, TokenHandler } from '../../src/fake-provider/index.js'

export interface TokenFault {
  /** Most token requests open at the provider at the same time. */
  readonly maxConcurrent: number
  /** Start failing (or hanging) token requests. */
  on(): void
  /** Let the fake provider answer normally again. */
  off(): void
}

function tracked (provider: FakeProvider, behave: TokenHandler): TokenFault {
  let open = 0
  let maxConcurrent = 0
  let failing = false
  provider.setTokenHandler((req, res, body) => {
    open++
    maxConcurrent = Math.max(maxConcurrent, open)
    res.once('close', () => { open-- })
    return failing ? behave(req, res, body) : false
  })
  return {
    get maxConcurrent () { return maxConcurrent },
    on () { failing = true },
    off () { failing = false },
  }
}

/** The token endpoint answers 503 while on, like a provider in maintenance. */
export function tokenOutage (provider: FakeProvider): TokenFault {
  return tracked(provider, (_req, res) => {
    res.writeHead(503, { 'content-type': 'text/html' }).end('<html>maintenance</html>')
    return true
  })
}

/** The token endpoint accepts and never answers while on. */
export function hangingTokenEndpoint (provider: FakeProvider): TokenFault {
  return tracked(provider, () => true)
}
