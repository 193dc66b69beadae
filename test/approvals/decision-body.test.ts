/**
 * Issue 43 item 10: a decision's body is JSON whatever its Content-Type claims, as proxied bodies
 * are. docs/approvals.md's own curl command decides, and so does curl's `-d` alone (a form type);
 * what cannot be read is a 400 saying what to send, and an unreadable Content-Type is refused with
 * what to send instead and logged, here as on the proxy routes.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { promisify } from 'node:util'
import t from 'tap'
import { assertProxyError } from '../helpers/proxy-error.js'
import type { RunningProxy } from '../helpers/harness.js'
import { AGENT_KEY, APPROVER_KEY, pay, startApprovalsRig, type HeldAnswer } from './approvals-harness.js'

// Over approveAbove (100); three fit in the day's 500.
const held = { amount: '150', currency: 'KES' }

/** A raw POST: fetch would add a Content-Type of its own to a string body. */
function post (proxy: RunningProxy, path: string, contentType: string | null, body: string): Promise<{ status: number, headers: Record<string, string | string[] | undefined>, body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${APPROVER_KEY}`, 'content-length': String(Buffer.byteLength(body)) }
    if (contentType !== null) headers['content-type'] = contentType
    const req = request(`${proxy.url}${path}`, { method: 'POST', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }) })
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function holdOne (proxy: RunningProxy, reference: string): Promise<string> {
  const answer = await pay(proxy, { ...held, externalReference: reference })
  const { approval } = await answer.json() as HeldAnswer
  return approval.id
}

t.test('the docs\' curl command, and curl -d without a Content-Type of its own, decide', async (t) => {
  const { proxy } = await startApprovalsRig(t)
  const docs = readFileSync(new URL('../../docs/approvals.md', import.meta.url), 'utf8')
  const command = /^curl -X POST localhost:8080\/approvals\/apr_…\/approve [^\n]*\\\n[^\n]*$/m.exec(docs)?.[0]
  if (command === undefined) throw new Error('docs/approvals.md\'s curl approve command was not found')
  const asWritten = command.replace('localhost:8080', proxy.url).replace('apr_…', await holdOne(proxy, 'docs-curl'))
  const formDefault = asWritten.replace(/ -H 'content-type: [^']*'/, '')
  t.not(formDefault, asWritten, 'the command without its Content-Type')
  for (const [label, line] of [['as written', asWritten], ['curl -d alone (application/x-www-form-urlencoded)', formDefault.replace(/apr_[A-Za-z0-9_-]+/, await holdOne(proxy, 'docs-curl-form'))]] as const) {
    const { stdout } = await promisify(execFile)('bash', ['-c', `${line} -s -w '\\n%{http_code}'`], { env: { PATH: process.env['PATH'], TREASURER_KEY: APPROVER_KEY } })
    const [body, status] = stdout.split('\n')
    t.equal(status, '200', `${label}: ${body}`)
    t.match(JSON.parse(body ?? '{}'), { approval: { status: 'approved', decidedBy: 'Ann', reason: 'invoice 2 checked', decidedByCaller: 'treasurer' } }, label)
  }
})

t.test('any Content-Type, or none, is read as JSON; what is not a JSON object is a 400 saying what to send', async (t) => {
  const { proxy } = await startApprovalsRig(t)
  for (const contentType of [null, 'text/plain', 'application/json; charset=utf-8', 'application/octet-stream', 'multipart/form-data; boundary=x']) {
    const id = await holdOne(proxy, `type-${contentType ?? 'none'}`.replace(/[^A-Za-z0-9-]/g, '-'))
    const answer = await post(proxy, `/approvals/${id}/reject`, contentType, '{"by": "Ann", "reason": "not this week"}')
    t.equal(answer.status, 200, `${contentType ?? 'no Content-Type'}: ${answer.body}`)
    t.match(JSON.parse(answer.body), { approval: { status: 'rejected', decidedBy: 'Ann', reason: 'not this week' } })
  }
  const id = await holdOne(proxy, 'unreadable')
  for (const [label, body] of [['a form', 'by=Ann&reason=ok'], ['an array', '[{"by": "Ann"}]'], ['by named twice', '{"by": "Ann", "by": "Eve"}'], ['cut short', '{"by": "Ann"']] as const) {
    const answer = await post(proxy, `/approvals/${id}/approve`, 'application/x-www-form-urlencoded', body)
    const error = await assertProxyError(t, answer, 400, 'BAD_REQUEST', label)
    t.match(error?.error.message, 'send the decision as a JSON object, {"by": "<your name>", "reason": "<optional text>"}, with any Content-Type', label)
  }
  const pending = await fetch(`${proxy.url}/approvals/${id}`, { headers: { authorization: `Bearer ${AGENT_KEY}` } })
  t.match(await pending.json(), { approval: { status: 'pending' } }, 'nothing was decided by an unreadable body')
})

t.test('an unreadable Content-Type is refused saying what to send, and logged, on the approvals and the proxy routes', async (t) => {
  const { proxy } = await startApprovalsRig(t)
  const id = await holdOne(proxy, 'bad-type')
  for (const [path, contentType] of [[`/approvals/${id}/approve`, 'json'], [`/approvals/${id}/approve`, ''], ['/sandbox/fiat/payouts', ';']] as const) {
    const answer = await post(proxy, path, contentType, '{"by": "Ann"}')
    const error = await assertProxyError(t, answer, 400, 'INVALID_HEADERS', `${path} with Content-Type ${JSON.stringify(contentType)}`)
    t.match(error?.error.message, /Content-Type is empty or not a media type; send one such as application\/json, or none/)
  }
  t.match(proxy.logs.find('Content-Type refused'), [
    { level: 40, code: 'INVALID_HEADERS', contentType: 'json' },
    { level: 40, code: 'INVALID_HEADERS', contentType: '' },
    { level: 40, code: 'INVALID_HEADERS', contentType: ';' },
  ])
})
