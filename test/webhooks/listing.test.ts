/**
 * `webhooks list` and `webhooks show` (SPEC §10) on a running inbox's store, over real sockets: the
 * two agree on the attempts (every one, and this round's), the next attempt says what is true, and
 * whatever a sender chose is printed escaped for a terminal (text/terminal-safe.ts).
 */
import t from 'tap'
import { eventually } from '../helpers/eventually.js'
import { rawRequest } from '../helpers/raw-http.js'
import { PATH_TOKEN, post, startInboxAndApp, webhooksCommand, type RunningInbox } from './inbox-harness.js'

interface Listed { id: string, status: string, attempts: number, attemptsThisRound: number, receivedAt: string, next: string | null, nextAttemptAt: string | null, waitingBehind: string | null, key: string }

async function listJson (inbox: RunningInbox): Promise<Listed[]> {
  const { out } = await webhooksCommand(inbox, ['list', '--json'])
  return out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Listed)
}

t.test('list and show agree on attempts after a replay; the next attempt is a retry time, "after" the head an event waits behind, or now', async (t) => {
  const { inbox, app } = await startInboxAndApp(t, { PROXY_WEBHOOK_ORDER_KEY_POINTER: '/ref', PROXY_WEBHOOK_RETRY_SCHEDULE: '50ms,1h' })
  app.answer((_req, res) => { res.statusCode = 500; res.end() })
  const head = String((await post(inbox.intakeUrl, '{"ref":"pay_A","n":1}')).json['id'])
  const round = async (n: number, total: number): Promise<Listed | undefined> => {
    let found: Listed | undefined
    await eventually(async () => {
      found = (await listJson(inbox)).find((e) => e.id === head)
      return found?.attemptsThisRound === n && found.attempts === total
    }, { what: `${total} attempts, ${n} this round` })
    return found
  }
  await round(2, 2)
  t.equal((await webhooksCommand(inbox, ['replay', head])).code, 0)
  const listed = await round(2, 4)
  t.match(listed, { status: 'pending', attempts: 4, attemptsThisRound: 2, next: 'retry', waitingBehind: null }, 'four attempts in all, two since the replay')
  t.ok(Date.parse(listed?.nextAttemptAt ?? '') > Date.now() + 3_000_000, 'the retry an hour away')
  const shown = JSON.parse((await webhooksCommand(inbox, ['show', head])).out) as { attempts: unknown[], attemptsThisRound: number, nextAttemptAt: string }
  t.equal(shown.attempts.length, 4, 'show lists as many attempts as list counts')
  t.equal(shown.attemptsThisRound, 2)
  t.equal(shown.nextAttemptAt, listed?.nextAttemptAt)

  const waiter = String((await post(inbox.intakeUrl, '{"ref":"pay_A","n":2}')).json['id'])
  const waiting = (await listJson(inbox)).find((e) => e.id === waiter)
  t.match(waiting, { status: 'pending', attempts: 0, next: 'waiting', waitingBehind: head }, 'waits behind the head')
  t.equal(waiting?.nextAttemptAt, new Date(Date.parse(waiting?.receivedAt ?? '') + 900_000).toISOString(), 'until the order wait ends, at the latest; not its receipt time')
  const table = (await webhooksCommand(inbox, ['list'])).out.split('\n')
  t.equal(table[0], 'id\tstatus\tattempts\tthis round\treceived\tnext attempt\tkey\tbytes')
  t.match(table.find((l) => l.startsWith(waiter)), `\tafter ${head}, by ${waiting?.nextAttemptAt ?? ''}\t`)
  t.match(table.find((l) => l.startsWith(head)), /^\S+\tpending\t4\t2\t/)
  t.match(JSON.parse((await webhooksCommand(inbox, ['show', waiter])).out), { next: 'waiting', waitingBehind: head, attempts: [] })

  await inbox.deliverer.stop()
  const due = String((await post(inbox.intakeUrl, '{"n":3}')).json['id'])
  t.match((await listJson(inbox)).find((e) => e.id === due), { attempts: 0, next: 'due', nextAttemptAt: null, waitingBehind: null }, 'never attempted, nothing ahead of it: due now')
  t.match((await webhooksCommand(inbox, ['list'])).out.split('\n').find((l) => l.startsWith(due)), /\tnow\t/)
})

/** Anything a terminal would act on or hide; newlines and tabs are the output's own (rows and cells are counted). */
// eslint-disable-next-line no-control-regex -- controls are what the output must not hold
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/

t.test('a sender\'s event id and headers are printed escaped by list, list --json and show: controls, a bare CR, an escape sequence', async (t) => {
  const { inbox } = await startInboxAndApp(t, { PROXY_WEBHOOK_EVENT_ID_POINTER: '/id' })
  await inbox.deliverer.stop()
  const eventId = 'inv-9\u001b[49G5 KES\rforged\trow\u0007\u202e'
  const body = JSON.stringify({ id: eventId })
  // HTTP lets only obs-text through in a header value: C1 controls such as CSI (0x9b) and NEL (0x85).
  const note = Buffer.from([0x61, 0x9b, 0x33, 0x31, 0x6d, 0x72, 0x65, 0x64, 0x85, 0x62])
  const request = Buffer.concat([
    Buffer.from(`POST /webhooks/${PATH_TOKEN} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Note: `),
    note, Buffer.from(`\r\n\r\n${body}`),
  ])
  const res = await rawRequest(inbox.port, request)
  t.equal(res.status, 200)
  const id = (JSON.parse(res.body) as { id: string }).id

  const table = (await webhooksCommand(inbox, ['list'])).out
  t.notMatch(table, UNSAFE, 'the table holds nothing a terminal acts on')
  t.equal(table.split('\n').length, 3, 'a header line and one row: the CR and the tab forged no row or cell')
  t.equal(table.split('\n')[1]?.split('\t').length, 8, 'eight cells')
  t.match(table, 'id:inv-9\\x1b[49G5 KES\\rforged\\trow\\x07\\u202e', 'the event id spelled out')

  const json = (await webhooksCommand(inbox, ['list', '--json'])).out
  t.notMatch(json, UNSAFE)
  t.equal((JSON.parse(json) as Listed).key, `id:${eventId}`, 'the JSON holds the same value')

  const shown = (await webhooksCommand(inbox, ['show', id])).out
  t.notMatch(shown, UNSAFE, 'show holds nothing a terminal acts on')
  const detail = JSON.parse(shown) as { key: string, headers: Array<[string, string]> }
  t.equal(detail.key, `id:${eventId}`)
  t.same(detail.headers.find(([name]) => name === 'x-note'), ['x-note', note.toString('latin1')], 'the header as received, once parsed')
})
