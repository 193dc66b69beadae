/**
 * How `/mcp` asks whether a bearer value that is no caller key is an OAuth access token, and whose
 * (SPEC §15). The OAuth feature provides it; MCP reads it; neither knows the other.
 */
import type { CallerNotPermittedError, CallerUnauthenticatedError } from '../errors.js'
import type { CallerSpec } from './callers-file.js'

export type TokenVerdict =
  | { ok: true, caller: CallerSpec, clientId: string | null }
  /** The refusal carries its `WWW-Authenticate` challenge; its message names no part of the token. */
  | { ok: false, error: CallerUnauthenticatedError | CallerNotPermittedError }

export interface TokenCallers {
  /** The 401's `WWW-Authenticate` for a request with no credential at all: where to sign in. */
  readonly challenge: string
  readonly judge: (token: string, peer: string) => Promise<TokenVerdict>
}
