/** `PROXY_DUPLICATE_*` (SPEC §16) read, refused and warned about as the start reads them. */
import t from 'tap'
import { resolveDuplicates } from '../../src/config/duplicate-settings.js'
import { DEFAULT_DUPLICATE_RECIPIENT_POINTERS, type RawSettings } from '../../src/config/schema.js'

const settings = (over: Partial<RawSettings>): RawSettings => ({
  PROXY_PAYMENTS: 'on',
  PROXY_DUPLICATE_WINDOW_SECONDS: 900,
  PROXY_DUPLICATE_RECIPIENT_POINTERS: DEFAULT_DUPLICATE_RECIPIENT_POINTERS,
  ...over,
}) as RawSettings

function read (over: Partial<RawSettings>, variables: Record<string, string> = {}): { config: ReturnType<typeof resolveDuplicates>, problems: string[], warnings: string[] } {
  const problems: string[] = []
  const warnings: string[] = []
  return { config: resolveDuplicates(settings(over), variables, problems, warnings), problems, warnings }
}

t.test('on by default with payments, 900 s, the documented pointers', async (t) => {
  t.same(read({}).config, { windowMs: 900_000, recipientPointers: ['/payoutMethod/accountNumber', '/recipient', '/phoneNumber', '/accountNumber', '/address'] })
})

t.test('off with a window of 0, or with payments off (then a set variable is named in a warning)', async (t) => {
  t.equal(read({ PROXY_DUPLICATE_WINDOW_SECONDS: 0 }).config, null)
  const off = read({ PROXY_PAYMENTS: 'off' }, { PROXY_DUPLICATE_WINDOW_SECONDS: '60' })
  t.equal(off.config, null)
  t.match(off.warnings, [/PROXY_DUPLICATE_WINDOW_SECONDS set but PROXY_PAYMENTS is not on/])
  t.same(read({ PROXY_PAYMENTS: 'off' }).warnings, [], 'nothing said when nothing was set')
})

t.test('a pointer that is not one, or none at all, stops the start naming the variable', async (t) => {
  t.match(read({ PROXY_DUPLICATE_RECIPIENT_POINTERS: '/recipient,phone' }).problems, [/PROXY_DUPLICATE_RECIPIENT_POINTERS: "phone" must be a JSON Pointer/])
  t.match(read({ PROXY_DUPLICATE_RECIPIENT_POINTERS: ' , ' }).problems, [/must list at least one JSON Pointer/])
})
