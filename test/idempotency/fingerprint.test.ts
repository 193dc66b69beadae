import { hash } from 'node:crypto'
import t from 'tap'
import { canonicalJson, fingerprintOf } from '../../src/idempotency/fingerprint.js'
import { HeldJson } from '../../src/json/held-json.js'
import { parseStrictJson, type JsonValue } from '../../src/json/strict-json.js'
import { generatedJsonTexts } from '../helpers/generated-json.js'

function read (text: string): JsonValue {
  const parsed = parseStrictJson(text)
  if (!parsed.ok) throw new Error(`not JSON: ${text}`)
  return parsed.value
}
const fp = (text: string): string => fingerprintOf(new HeldJson(Buffer.from(text)))

/**
 * RFC 8785 written the plain way: the reference canonicalJson is held to. JSON.stringify's strings
 * and numbers, members sorted by UTF-16 code units.
 */
function referenceCanonical (value: JsonValue): string | null {
  switch (typeof value) {
    case 'string': return JSON.stringify(value)
    case 'number': return Number.isFinite(value) ? JSON.stringify(value) : null
    case 'boolean': return String(value)
  }
  if (value === null) return 'null'
  const parts: string[] = []
  if (Array.isArray(value)) {
    for (const item of value) {
      const text = referenceCanonical(item)
      if (text === null) return null
      parts.push(text)
    }
    return `[${parts.join(',')}]`
  }
  for (const name of Object.keys(value).sort()) {
    const text = referenceCanonical(value[name] as JsonValue)
    if (text === null) return null
    parts.push(`${JSON.stringify(name)}:${text}`)
  }
  return `{${parts.join(',')}}`
}

t.test('canonical JSON per RFC 8785', async (t) => {
  const cases: Array<[string, string]> = [
    ['{"b":1,"a":2}', '{"a":2,"b":1}'],
    [' { "a" : [ 1 , { "d":true, "c":null } ] } ', '{"a":[1,{"c":null,"d":true}]}'],
    ['{"\\u00e9":1,"e":2,"\\ud83d\\ude00":3,"\\u20ac":4}', '{"e":2,"é":1,"€":4,"😀":3}'],
    ['[1.0, 1e2, 1E-7, -0, 0.1, 100000000000000000000000, 1e21, 123456789012345680000]', '[1,100,1e-7,0,0.1,1e+23,1e+21,123456789012345680000]'],
    ['"\\u000f\\"\\\\\\/\\t"', '"\\u000f\\"\\\\/\\t"'],
    ['{"a":"\\u2028"}', '{"a":"\u2028"}'],
  ]
  for (const [input, expected] of cases) t.equal(canonicalJson(read(input)), expected, input)
  // RFC 8785 §3.2.3 sorts by UTF-16 code units: U+1F600 (a surrogate pair, 0xD83D) sorts before U+FB33.
  t.equal(canonicalJson(read('{"\\ufb33":1,"\\ud83d\\ude00":2}')), '{"😀":2,"\ufb33":1}')
  t.equal(canonicalJson(read('[1e400]')), null, 'a number beyond the doubles has no canonical form')
})

t.test('the fingerprint hashes the canonical text, with or without a backslash in the body', async (t) => {
  let plain = 0
  let checked = 0
  for (const text of generatedJsonTexts(3000)) {
    const bytes = Buffer.from(text)
    if (!bytes.includes(0x5c)) plain++
    const expected = referenceCanonical(JSON.parse(text) as JsonValue)
    if (canonicalJson(JSON.parse(text) as JsonValue) !== expected) { t.equal(canonicalJson(JSON.parse(text) as JsonValue), expected, text); continue }
    const fingerprint = fingerprintOf(new HeldJson(bytes))
    if (fingerprint !== hash('sha256', expected === null ? Buffer.concat([Buffer.from('raw:'), bytes]) : `jcs:${expected}`)) { t.fail(`fingerprint: ${text}`); continue }
    checked++
  }
  t.equal(checked, 3000, 'every generated document')
  t.ok(plain > 500 && plain < 2500, `both ways taken (${plain} of 3000 without a backslash)`)
})

t.test('a body with no canonical form is fingerprinted by its bytes, in a domain of its own', async (t) => {
  const raw = (text: string): string => hash('sha256', Buffer.concat([Buffer.from('raw:'), Buffer.from(text)]))
  for (const text of ['{"a":1,"a":2}', '{"amount":1e400}', '[1,-1e999]', '{"x":{"y":1,"y":1}}']) {
    t.equal(fingerprintOf(new HeldJson(Buffer.from(text))), raw(text), `${text}: the hash of "raw:" and its bytes`)
  }
  t.equal(fingerprintOf(new HeldJson(Buffer.from('not json'))), raw('not json'), 'a body that is not JSON too')
  t.equal(fingerprintOf(new HeldJson(Buffer.from('{ "b":1, "a":2 }'))), hash('sha256', 'jcs:{"a":2,"b":1}'), 'a JSON value: the hash of "jcs:" and its canonical text')
})

t.test('fingerprints: equal for the same JSON value, different otherwise', async (t) => {
  t.equal(fp('{"amount":"10.00","externalReference":"r1"}'), fp('{ "externalReference" : "r1",\n "amount":"10.00" }'), 'member order and whitespace')
  t.equal(fp('{"a":1}'), fp('{"a":1.0}'), 'the same number in another spelling')
  t.equal(fp('{"a":"é"}'), fp('{"a":"\\u00e9"}'), 'an escape and its character')
  t.not(fp('{"a":"10.00"}'), fp('{"a":"10.0"}'), 'strings are compared exactly')
  t.not(fp('{"a":[1,2]}'), fp('{"a":[2,1]}'), 'array order matters')
  t.not(fp('{"a":1e400}'), fp('{"a":null}'), 'an unrepresentable number is not null')
  t.not(fp('{"a":1,"a":2}'), fp('{"a":2}'), 'a repeated name is not the value JSON.parse keeps')
  t.equal(fp('null'), fp(' null '), 'the JSON null is a value like any other, not a body without one')
  t.match(fp('{"a":1}'), /^[0-9a-f]{64}$/)
})
