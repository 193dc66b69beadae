/**
 * The one assertion for the proxy's own errors (SPEC §5): status, `x-proxy-error`, a JSON
 * `content-type`, and a body `{"error": {"code", "message"}}` with the same code. It accepts what
 * the suite's clients return (fetch's Response, undici's `request` result, or an already-read
 * `{ status | statusCode, headers, body }`), so no test of an error checks only the status.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { Test } from 'tap'

type HeaderBag = Headers | IncomingHttpHeaders | Record<string, string | string[] | undefined>

interface ReadAnswer { status?: number, statusCode?: number, headers: HeaderBag, body: string }
interface StreamedAnswer { statusCode: number, headers: IncomingHttpHeaders, body: { text: () => Promise<string> } }

export type Answer = Response | ReadAnswer | StreamedAnswer

export interface ProxyErrorBody { error: { code: string, message: string } }

function header (headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined
  const value = headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

async function normalise (answer: Answer): Promise<{ status: number, headers: HeaderBag, body: string }> {
  if (answer instanceof Response) return { status: answer.status, headers: answer.headers, body: await answer.text() }
  const status = 'status' in answer && typeof answer.status === 'number' ? answer.status : answer.statusCode ?? 0
  const body = typeof answer.body === 'string' ? answer.body : await answer.body.text()
  return { status, headers: answer.headers, body }
}

/**
 * Asserts that `answer` is the proxy's own error `code` with `status`; returns the parsed body for
 * further checks (a message naming a path, say). A body that is not JSON fails the test, not the run.
 */
export async function assertProxyError (t: Test, answer: Answer, status: number, code: string, label = code): Promise<ProxyErrorBody | undefined> {
  const res = await normalise(answer)
  t.equal(res.status, status, `${label}: status ${status}`)
  t.equal(header(res.headers, 'x-proxy-error'), code, `${label}: x-proxy-error`)
  t.match(header(res.headers, 'content-type'), /^application\/json\b/, `${label}: JSON content-type`)
  let body: unknown
  try {
    body = JSON.parse(res.body)
  } catch {
    t.fail(`${label}: the body is not JSON: ${JSON.stringify(res.body.slice(0, 200))}`)
    return undefined
  }
  t.match(body, { error: { code, message: String } }, `${label}: error body`)
  return body as ProxyErrorBody
}
