/**
 * Where each environment lives on the two provider hosts (SPEC §1). The sandbox base is the
 * production one with `sandbox` inserted after `/api`; on the crypto host that makes the sandbox
 * base an extension of the production one, so sandbox is matched first.
 */

import type { ProviderEnvironment, ProviderInterface } from './types.js'

export const BASE_PATHS: Record<ProviderInterface, Record<ProviderEnvironment, string>> = {
  fiat: { production: '/api/b2b', sandbox: '/api/sandbox/b2b' },
  crypto: { production: '/api', sandbox: '/api/sandbox' },
}

/** Relative to the fiat base of the environment. */
export const TOKEN_PATH = '/auth/generate-bearer-token'

const MATCH_ORDER: readonly ProviderEnvironment[] = ['sandbox', 'production']

export interface RequestTarget {
  /** null when the path is outside every base. */
  environment: ProviderEnvironment | null
  /** Raw path after the base, not decoded or normalised, so tests see exactly what the proxy sent. */
  path: string
  /** Raw query string without '?'. */
  query: string
}

export function resolveTarget (server: ProviderInterface, rawTarget: string): RequestTarget {
  const queryStart = rawTarget.indexOf('?')
  const pathname = queryStart < 0 ? rawTarget : rawTarget.slice(0, queryStart)
  const query = queryStart < 0 ? '' : rawTarget.slice(queryStart + 1)
  for (const environment of MATCH_ORDER) {
    const base = BASE_PATHS[server][environment]
    if (pathname === base || pathname.startsWith(`${base}/`)) {
      return { environment, path: pathname.slice(base.length), query }
    }
  }
  return { environment: null, path: pathname, query }
}
