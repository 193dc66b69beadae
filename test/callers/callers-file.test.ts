import t from 'tap'
import { parseCallersText, readCallersFile } from '../../src/callers/callers-file.js'
import { fieldPath } from '../../src/config/schema-problems.js'
import { compilePathRule } from '../../src/callers/path-rules.js'
import { folded } from '../helpers/canonical.js'

const KEY = 'a'.repeat(64)

t.test('problems are named by their field path (TypeBox schema, then the checks a schema cannot make)', async (t) => {
  const cases: Array<[string, unknown, string]> = [
    ['bad method', { callers: [{ id: 'a', keySha256: KEY, allow: [] }, { id: 'b', keySha256: KEY, allow: [{ methods: ['FETCH'] }] }] }, 'callers[1].allow[0].methods[0]: "FETCH" is not an HTTP method'],
    ['duplicate id', { callers: [{ id: 'a', keySha256: KEY, allow: [] }, { id: 'a', keySha256: KEY, allow: [] }] }, 'callers[1].id: "a" is not unique'],
    ['bad id', { callers: [{ id: 'A!', keySha256: KEY, allow: [] }] }, 'callers[0].id: must match'],
    ['short hash', { callers: [{ id: 'a', keySha256: 'abc', allow: [] }] }, 'callers[0].keySha256: must be 64'],
    ['no key nor sources', { callers: [{ id: 'a', allow: [] }] }, 'callers[0]: needs keySha256, sources or oauth'],
    ['bad CIDR', { callers: [{ id: 'a', sources: ['10.0.0.0/33'], allow: [] }] }, 'callers[0].sources[0]: must be an IP'],
    ['overlapping key-less sources', { callers: [{ id: 'a', sources: ['10.0.0.0/8'], allow: [] }, { id: 'b', sources: ['10.1.0.0/16'], allow: [] }] }, 'callers[1].sources: overlaps'],
    ['zero rate', { callers: [{ id: 'a', keySha256: KEY, allow: [], rateLimit: { requests: 0, perSeconds: 1 } }] }, 'callers[0].rateLimit.requests: must be a positive integer'],
    ['signed decimal', { callers: [{ id: 'a', keySha256: KEY, allow: [], amountLimits: [{ amount: '/amount', currency: '/currency', perRequest: { KES: '-5' } }] }] }, 'callers[0].amountLimits[0].perRequest.KES: must be a plain decimal'],
    ['bad pointer', { callers: [{ id: 'a', keySha256: KEY, allow: [], amountLimits: [{ amount: 'amount', currency: '/c' }] }] }, 'callers[0].amountLimits[0].amount: must be a JSON Pointer'],
    ['not an object', [], 'callers: must be an object with a list of callers'],
    ['callers not a list', { callers: 3 }, 'callers: must be a list'],
    ['missing allow', { callers: [{ id: 'a', keySha256: KEY }] }, 'callers[0].allow: is required'],
    ['unknown field', { callers: [{ id: 'a', keySha256: KEY, allow: [], extra: 1 }] }, 'callers[0].extra: is not a known field'],
    ['unknown top-level field', { callers: [], other: 1 }, 'other: is not a known field'],
    ['methods not a list', { callers: [{ id: 'a', keySha256: KEY, allow: [{ methods: 'GET' }] }] }, 'callers[0].allow[0].methods: must be a list'],
    ['fractional rate', { callers: [{ id: 'a', keySha256: KEY, allow: [], rateLimit: { requests: 1.5, perSeconds: 1 } }] }, 'callers[0].rateLimit.requests: must be a positive integer'],
    ['unknown environment', { callers: [{ id: 'a', keySha256: KEY, allow: [{ environments: ['staging'] }] }] }, 'callers[0].allow[0].environments[0]: "staging" is not an environment'],
    ['relative glob', { callers: [{ id: 'a', keySha256: KEY, allow: [{ paths: ['payouts'] }] }] }, 'callers[0].allow[0].paths[0]: must be a path glob starting with "/"'],
    ['boolean amount', { callers: [{ id: 'a', keySha256: KEY, allow: [], amountLimits: [{ amount: '/a', currency: '/c', perDay: { USD: true } }] }] }, 'callers[0].amountLimits[0].perDay.USD: must be a plain decimal'],
    ['exponent amount', { callers: [{ id: 'a', keySha256: KEY, allow: [], amountLimits: [{ amount: '/a', currency: '/c', perDay: { USD: 1e21 } }] }] }, 'callers[0].amountLimits[0].perDay.USD: must be a plain decimal'],
    ['one key for two callers', { callers: [{ id: 'a', keySha256: KEY, allow: [] }, { id: 'b', keySha256: KEY.toUpperCase(), allow: [] }] }, 'callers[1].keySha256: is the key of callers[0] too'],
    ['oauth neither a list nor grantable', { callers: [{ id: 'a', allow: [], oauth: { grantable: false } }] }, 'callers[0].oauth: must be a list of matches'],
    ['oauth match of no field', { callers: [{ id: 'a', allow: [], oauth: [{}] }] }, 'callers[0].oauth[0]: must name subject, clientId or both'],
    ['oauth empty list', { callers: [{ id: 'a', allow: [], oauth: [] }] }, 'callers[0].oauth: must list at least one match'],
    ['oauth unknown field', { callers: [{ id: 'a', allow: [], oauth: [{ sub: 'x' }] }] }, 'callers[0].oauth'],
    ['oauth empty subject', { callers: [{ id: 'a', allow: [], oauth: [{ subject: '' }] }] }, 'callers[0].oauth'],
    ['one oauth match for two callers', { callers: [{ id: 'a', allow: [], oauth: [{ clientId: 'c' }] }, { id: 'b', allow: [], oauth: [{ subject: 's' }, { clientId: 'c' }] }] }, 'callers[1].oauth[1]: is a match of callers[0] too'],
    ['flag not a boolean', { callers: [{ id: 'a', keySha256: KEY, allow: [], requireExternalReference: 'yes' }] }, 'callers[0].requireExternalReference: must be true or false'],
  ]
  for (const [name, document, problem] of cases) {
    const load = parseCallersText(JSON.stringify(document), '.json')
    t.notOk(load.ok, name)
    if (!load.ok) t.ok(load.problems.some((p) => p.startsWith(problem)), `${name}: ${load.problems.join('; ')}`)
  }
  const repeated = parseCallersText(`{"callers":[{"id":"a","keySha256":"${KEY}","allow":[{"methods":["GET"]}],"allow":[{}]}]}`, '.json')
  t.same(repeated.ok ? [] : repeated.problems, ['not valid JSON: a member name is repeated in one object'], 'a repeated member is refused, not read as its last copy')
  t.same(fieldPath('/callers/12/amountLimits/0/perDay/a~1b~0c', 'callers'), 'callers[12].amountLimits[0].perDay.a/b~c', 'JSON Pointer escapes undone')
})

t.test('oauth: a caller reached only with a token, by its matches or as grantable', async (t) => {
  const load = parseCallersText(`callers:
  - { id: a, allow: [{}], oauth: [{ subject: person-1, clientId: app }, { clientId: robot }] }
  - { id: b, allow: [{}], oauth: { grantable: true } }
  - { id: c, keySha256: ${KEY}, allow: [{}] }
`, '.yaml')
  t.ok(load.ok, load.ok ? '' : load.problems.join('; '))
  if (!load.ok) return
  t.same(load.callers.map((c) => c.oauth), [
    { kind: 'matches', matches: [{ subject: 'person-1', clientId: 'app' }, { subject: null, clientId: 'robot' }] },
    { kind: 'grantable' },
    null,
  ])
})

t.test('defaults: both environments and interfaces, every method, every path; key hash lower-cased', async (t) => {
  const load = parseCallersText(`callers:\n  - id: a\n    keySha256: ${KEY.toUpperCase()}\n    allow: [{}]\n`, '.yaml')
  t.ok(load.ok)
  if (!load.ok) return
  const [caller] = load.callers
  t.equal(caller?.keySha256, KEY)
  t.same([...caller?.allow[0]?.environments ?? []], ['sandbox', 'production'])
  t.same([...caller?.allow[0]?.interfaces ?? []], ['fiat', 'crypto'])
  t.equal(caller?.allow[0]?.methods.size, 7)
  t.equal(caller?.allow[0]?.paths, null)
  t.equal(caller?.rateLimit, null)
  t.equal(caller?.requireExternalReference, false)
})

t.test('path globs: segment edges, ** depth, case and trailing slash', async (t) => {
  const rule = compilePathRule(['/payouts/**', '/balances', '/wallets/*'])
  const cases: Array<[string, boolean]> = [
    ['/balances', true], ['/balances/', true], ['/BALANCES', true], ['/balancesX', false], ['/balances/x', false],
    ['/payouts', true], ['/payouts/1', true], ['/payouts/1/2/3', true], ['/payoutsX', false],
    ['/wallets/1', true], ['/wallets/1/2', false], ['/wallets', false],
  ]
  for (const [path, expected] of cases) t.equal(rule(folded(path)), expected, path)
})

t.test('deploy/callers.example.yaml loads', async (t) => {
  const load = readCallersFile(new URL('../../deploy/callers.example.yaml', import.meta.url).pathname)
  t.ok(load.ok, load.ok ? '' : load.problems.join('\n'))
  if (load.ok) t.same(load.callers.map((c) => c.id), ['payout-agent', 'reporting'])
})
