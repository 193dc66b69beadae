/**
 * SPEC §7 identity and `allow` as a table over identify and firstMismatch, no sockets: every way a
 * request is identified or refused, and every field of a rule that can refuse it.
 */
import t from 'tap'
import { parseCallersText } from '../../src/callers/callers-file.js'
import { callerOfToken, firstMismatch, identify, indexCallers, keySha256, type IdentityFacts } from '../../src/callers/judge-caller.js'
import { folded } from '../helpers/canonical.js'

const AGENT = 'pak_agent-key-0123456789abcdefghijklmnopqrstuvwxyz'
const PINNED = 'pak_pinned-key-0123456789abcdefghijklmnopqrstuvwxy'
const OPEN = 'pak_open-key-0123456789abcdefghijklmnopqrstuvwxyz0'

function index (): ReturnType<typeof indexCallers> {
  const load = parseCallersText(`callers:
  - id: agent
    keySha256: ${keySha256(AGENT)}
    allow:
      - environments: [sandbox]
        interfaces: [fiat]
        methods: [GET, POST]
        paths: ["/payouts/**", "/balances"]
      - interfaces: [crypto]
        methods: [GET]
  - id: pinned
    keySha256: ${keySha256(PINNED)}
    sources: [10.1.0.0/16, "fd00::/8"]
    allow: [{}]
  - id: open
    keySha256: ${keySha256(OPEN).toUpperCase()}
    allow: [{ methods: [GET] }]
  - id: local-service
    sources: [127.0.0.0/8]
    allow: [{ methods: [GET], paths: ["/status"] }]
  - id: office
    sources: [192.168.0.0/16]
    allow: [{ environments: [production] }]
`, '.yaml')
  if (!load.ok) throw new Error(load.problems.join('\n'))
  return indexCallers(load.callers)
}

interface RequestFacts extends IdentityFacts { environment: string | null, interface: string, method: string, path: string }

const base: RequestFacts = { authorizations: [], peer: '127.0.0.1', environment: 'sandbox', interface: 'fiat', method: 'GET', path: '/balances' }

/** Identity, then allow, as the callers plugin runs them. */
function judge (callers: ReturnType<typeof indexCallers>, facts: RequestFacts): string {
  const caller = identify(callers, facts)
  if (typeof caller === 'string') return `unauthenticated: ${caller}`
  const mismatch = firstMismatch(caller, { environment: facts.environment, interface: facts.interface, method: facts.method, path: folded(facts.path) })
  return `${mismatch === null ? 'permitted' : 'not-permitted'}: ${caller.id}`
}
const bearer = (key: string): string[] => [`Bearer ${key}`]

t.test('identity, then allow, one row per rule', async (t) => {
  const callers = index()
  const cases: Array<[string, Partial<RequestFacts>, string]> = [
    // identity (401)
    ['no key, no key-less caller for the address', { peer: '10.9.9.9' }, 'unauthenticated: no caller key'],
    ['no key, a key-less caller by address', { path: '/status' }, 'permitted: local-service'],
    ['key-less caller by address, other path', {}, 'not-permitted: local-service'],
    ['an unknown key is refused, not downgraded to the key-less caller of the address', { authorizations: bearer('pak_nobody') }, 'unauthenticated: unknown caller key'],
    ['two Authorization headers, even both the right key', { authorizations: [...bearer(AGENT), ...bearer(AGENT)] }, 'unauthenticated: more than one Authorization header'],
    ['two Authorization headers, the first right', { authorizations: [...bearer(AGENT), 'Bearer x'] }, 'unauthenticated: more than one Authorization header'],
    ['not Bearer', { authorizations: [`Basic ${AGENT}`] }, 'unauthenticated: Authorization is not "Bearer <caller key>"'],
    ['Bearer without a key', { authorizations: ['Bearer '] }, 'unauthenticated: Authorization is not "Bearer <caller key>"'],
    ['a key with a space inside', { authorizations: [`Bearer ${AGENT} x`] }, 'unauthenticated: Authorization is not "Bearer <caller key>"'],
    ['an empty Authorization', { authorizations: [''] }, 'unauthenticated: Authorization is not "Bearer <caller key>"'],
    ['a scheme that only ends in Bearer', { authorizations: [`NotBearer ${AGENT}`] }, 'unauthenticated: Authorization is not "Bearer <caller key>"'],
    ['scheme in any case, spaces around the key', { authorizations: [`bEaReR  ${AGENT} `] }, 'permitted: agent'],
    ['a keySha256 written in upper case', { authorizations: bearer(OPEN) }, 'permitted: open'],
    ['a keyed caller with sources, from inside them', { authorizations: bearer(PINNED), peer: '10.1.2.3' }, 'permitted: pinned'],
    ['a keyed caller with sources, from IPv6 inside them', { authorizations: bearer(PINNED), peer: 'fd00::1' }, 'permitted: pinned'],
    ['a keyed caller with sources, from elsewhere', { authorizations: bearer(PINNED), peer: '10.2.0.1' }, 'unauthenticated: caller key used from outside its sources'],
    ['a keyed caller with sources, from a key-less caller\'s address', { authorizations: bearer(PINNED) }, 'unauthenticated: caller key used from outside its sources'],
    ['a keyed caller without sources, from anywhere', { authorizations: bearer(OPEN), peer: '203.0.113.9' }, 'permitted: open'],
    // allow (403), each field of a rule
    ['agent, every field matching', { authorizations: bearer(AGENT) }, 'permitted: agent'],
    ['agent, ** matches the bare prefix', { authorizations: bearer(AGENT), path: '/payouts' }, 'permitted: agent'],
    ['agent, ** matches deeper', { authorizations: bearer(AGENT), path: '/payouts/a/b' }, 'permitted: agent'],
    ['agent, path outside the globs', { authorizations: bearer(AGENT), path: '/balancesx' }, 'not-permitted: agent'],
    ['agent, other method', { authorizations: bearer(AGENT), method: 'DELETE' }, 'not-permitted: agent'],
    ['agent, other environment', { authorizations: bearer(AGENT), environment: 'production' }, 'not-permitted: agent'],
    ['agent, other interface under the first rule, matched by the second', { authorizations: bearer(AGENT), interface: 'crypto', path: '/anything' }, 'permitted: agent'],
    ['agent, crypto under neither rule (POST)', { authorizations: bearer(AGENT), interface: 'crypto', method: 'POST' }, 'not-permitted: agent'],
    ['agent, crypto in production: the second rule names no environment', { authorizations: bearer(AGENT), interface: 'crypto', environment: 'production' }, 'permitted: agent'],
    ['no environment resolved: a rule for one environment does not match', { authorizations: bearer(AGENT), environment: null }, 'not-permitted: agent'],
    ['no environment resolved: a rule for both matches', { authorizations: bearer(AGENT), environment: null, interface: 'crypto' }, 'permitted: agent'],
    ['a rule naming production only', { peer: '192.168.1.1', environment: 'production' }, 'permitted: office'],
    ['a rule naming production only, in sandbox', { peer: '192.168.1.1' }, 'not-permitted: office'],
  ]
  for (const [name, facts, expected] of cases) {
    t.equal(judge(callers, { ...base, ...facts }), expected, name)
  }
})

t.test('an access token\'s caller (SPEC §15): every named field equal, one caller or none', async (t) => {
  const load = parseCallersText(`callers:
  - { id: by-client, allow: [{}], oauth: [{ clientId: robot }] }
  - { id: by-person, allow: [{}], oauth: [{ subject: person-1, clientId: desk }, { subject: person-2 }] }
  - { id: fenced, allow: [{}], sources: [10.1.0.0/16], oauth: [{ clientId: fenced-app }] }
  - { id: grantable, allow: [{}], oauth: { grantable: true } }
  - { id: keyed, keySha256: ${keySha256(AGENT)}, allow: [{}] }
`, '.yaml')
  if (!load.ok) throw new Error(load.problems.join('; '))
  const callers = indexCallers(load.callers)
  const cases: Array<[string, { subject: string | null, clientId: string | null }, string, string]> = [
    ['the client alone named', { subject: 'anyone', clientId: 'robot' }, '127.0.0.1', 'by-client'],
    ['a subject and its client', { subject: 'person-1', clientId: 'desk' }, '127.0.0.1', 'by-person'],
    ['the subject with another client', { subject: 'person-1', clientId: 'other' }, '127.0.0.1', 'the token matches no caller'],
    ['a subject alone named, any client', { subject: 'person-2', clientId: null }, '127.0.0.1', 'by-person'],
    ['two callers by different fields: refused, not settled by order', { subject: 'person-2', clientId: 'robot' }, '127.0.0.1', 'the token matches 2 callers (by-client, by-person)'],
    ['no subject, no client', { subject: null, clientId: null }, '127.0.0.1', 'the token matches no caller'],
    ['a grantable caller is never an external token\'s', { subject: 'grantable', clientId: 'grantable' }, '127.0.0.1', 'the token matches no caller'],
    ['sources bound a token caller too: inside', { subject: null, clientId: 'fenced-app' }, '10.1.2.3', 'fenced'],
    ['sources bound a token caller too: outside', { subject: null, clientId: 'fenced-app' }, '127.0.0.1', 'used from outside the caller\'s sources'],
  ]
  for (const [name, holder, peer, expected] of cases) {
    const caller = callerOfToken(callers, holder, peer)
    t.equal(typeof caller === 'string' ? caller : caller.id, expected, name)
  }
  t.equal(identify(callers, { authorizations: [], peer: '127.0.0.1' }), 'no caller key', 'a caller with only oauth is never a key-less caller')
  t.equal(callers.all.length, 5, 'every caller counted')
})

t.test('keySha256 is the hex SHA-256 of the whole key string', async (t) => {
  t.equal(keySha256('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
})
