import t from 'tap'
import { HeldJson } from '../../src/json/held-json.js'
import { JSON_POINTER_PATTERN, MAX_JSON_DEPTH, parseStrictJson, parseStrictJsonBytes, readPointer, readWithJsonParse, type JsonValue } from '../../src/json/strict-json.js'
import { generatedJsonTexts } from '../helpers/generated-json.js'

/** The value of a reading that must succeed; a failed one fails the test that asked. */
function valueOf (read: ReturnType<typeof parseStrictJson>): JsonValue {
  if (!read.ok) throw new Error(`not read: ${read.reason}`)
  return read.value
}

t.test('values read as JSON.parse reads them', async (t) => {
  const texts = [
    '{"a":1,"b":[true,false,null],"c":{"d":"e\\u00e9\\n"}}', ' [ 1 , -2.5e3 , 0.1 ] ', '"x"', '0', '-0', '1e400', '{"__proto__":{"polluted":1}}', '{}', '[]',
  ]
  for (const text of texts) t.same(parseStrictJson(text), { ok: true, value: JSON.parse(text) as JsonValue, hasDuplicates: false }, text)
  for (const numbers of ['value', 'text'] as const) {
    const proto = valueOf(parseStrictJson('{"__proto__":{"polluted":1}}', { numbers }))
    t.equal(({} as Record<string, unknown>)['polluted'], undefined, `${numbers}: no prototype pollution`)
    t.same(readPointer(proto, '/__proto__/polluted'), { kind: 'found', value: numbers === 'text' ? '1' : 1 }, `${numbers}: __proto__ is an ordinary member`)
    t.equal(Object.getPrototypeOf(proto), Object.prototype, `${numbers}: the prototype itself is untouched`)
  }
  for (const numbers of ['value', 'text'] as const) {
    const text = '{"__proto__":{"x":1},"b":2}'
    const read = valueOf(parseStrictJson(text, { numbers })) as Record<string, JsonValue>
    t.same(Object.getOwnPropertyDescriptor(read, '__proto__'), { ...Object.getOwnPropertyDescriptor(JSON.parse(text), '__proto__'), value: { x: numbers === 'text' ? '1' : 1 } }, `${numbers}: __proto__ an own, enumerable, writable, configurable member, as JSON.parse makes it`)
    t.same(Object.keys(read), ['__proto__', 'b'], `${numbers}: in order with the others`)
  }
  t.same(parseStrictJson('{"a":null,"b":true,"c":false,"d":"s","e":[1.5,-0,{}],"f":{"g":[]}}', { numbers: 'text' }), {
    ok: true, value: { a: null, b: true, c: false, d: 's', e: ['1.5', '-0', {}], f: { g: [] } }, hasDuplicates: false,
  }, 'every kind of value read token by token, numbers as their text')
  const plain = valueOf(parseStrictJson('{"a":1}'))
  for (const inherited of ['/constructor', '/toString', '/__proto__', '/hasOwnProperty']) {
    t.same(readPointer(plain, inherited), { kind: 'missing' }, `${inherited}: an inherited name is not a member`)
  }
  const twice = parseStrictJson('{"__proto__":1,"__proto__":2}')
  t.same(twice, { ok: true, value: JSON.parse('{"__proto__":2}') as unknown, hasDuplicates: true }, 'a repeated __proto__ is a duplicate like any name')
})

t.test('syntax errors are reported, never thrown', async (t) => {
  const bad = ['', '{', '{"a":1,}', '[1,]', '{"a" 1}', "{'a':1}", '01', '1.', '.5', '+1', 'NaN', 'tru', 'nul', 'fals', '"\u0001"', '"\\x41"', '{"a":1}x', '{a:1}', '[1 2]', '{"a":1 "b":2}', '{"a":1]', '[1}', '{,}', '{"a"}', '[', ']', '"abc', '- 1', '1e', '{"a":1,"a":2', 'nulx', 'trux', 'falsx', '[nulx]', '{"a"x1}', '{"a"=1}', '"\\u12"', '{"a\\u1":1}']
  for (const numbers of ['value', 'text'] as const) {
    for (const text of bad) t.match(parseStrictJson(text, { numbers }), { ok: false, reason: 'syntax' }, `${numbers}: ${JSON.stringify(text)}`)
  }
  t.match(parseStrictJson('['.repeat(MAX_JSON_DEPTH + 2) + ']'.repeat(MAX_JSON_DEPTH + 2)), { ok: false, reason: 'too-deep' })
  t.match(parseStrictJsonBytes(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])), { ok: false, reason: 'syntax' }, 'invalid UTF-8')
  t.same(parseStrictJsonBytes(Buffer.from('\uFEFF{"a":1}')), { ok: true, value: { a: 1 }, hasDuplicates: false }, 'a UTF-8 byte order mark is skipped (TextDecoder)')
})

t.test('a repeated member name makes a pointer through it ambiguous', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['{"amount":1,"amount":50000}', '/amount', 'ambiguous'],
    ['{"a":{"ref":"x"},"a":{"ref":"y"}}', '/a/ref', 'ambiguous'],
    ['{"a":{"ref":"x","ref":"y"}}', '/a/ref', 'ambiguous'],
    ['{"ref":"x","other":1,"other":2}', '/ref', 'found'],
    ['{"ref":"x","ref\\u0000":2}', '/ref', 'found'],
    ['{"r\\u0065f":"x","ref":"y"}', '/ref', 'ambiguous'],
    ['{"list":[{"ref":"x"}]}', '/list/0/ref', 'found'],
    ['{"list":[{"ref":"x"}]}', '/list/01/ref', 'missing'],
    ['{"list":[{"ref":"x"}]}', '/list/-', 'missing'],
    ['{"a/b":{"c~d":1}}', '/a~1b/c~0d', 'found'],
    ['["ref"]', '/ref', 'missing'],
    ['"ref"', '/ref', 'missing'],
    ['{"ref":null}', '/ref', 'found'],
    ['{"~1":1}', '/~01', 'found'],
    ['{"/":1}', '/~01', 'missing'],
    ['{"ref":"x"}', 'ref', 'missing'],
    ['{"ref":"x"}', '/ref/0', 'missing'],
    ['{"list":[1]}', '/list/1', 'missing'],
    ['{"0":"x"}', '/0', 'found'],
    ['{"":{"":1}}', '//', 'found'],
    ['{"a":1}', 'xa', 'missing'],
    ['{"list":[0,1]}', '/list/01', 'missing'],
    ['{"list":[0,1]}', '/list/1e0', 'missing'],
    ['{"list":[0,1]}', '/list/ 1', 'missing'],
    ['{"list":[0,1]}', '/list/1.0', 'missing'],
    ['{"list":[0,1]}', '/list/+1', 'missing'],
    ['{"list":[0,1]}', '/list/1', 'found'],
    ['{"list":[0,1,2,3,4,5,6,7,8,9,10]}', '/list/10', 'found'],
  ]
  for (const [text, pointer, kind] of cases) {
    const read = parseStrictJson(text)
    if (!read.ok) { t.fail(text); continue }
    t.equal(readPointer(read.value, pointer).kind, kind, `${text} ${pointer}`)
  }
  const dup = parseStrictJson('{"x":1,"x":2}')
  t.equal(dup.ok && dup.hasDuplicates, true)
  const clean = parseStrictJson('{"x":{"y":1},"z":[{"y":2}]}')
  t.equal(clean.ok && clean.hasDuplicates, false)
  const found = valueOf(parseStrictJson('{"a":{"b":[10,20]}}'))
  t.same(readPointer(found, '/a/b/1'), { kind: 'found', value: 20 as JsonValue })
  t.same(readPointer(found, ''), { kind: 'found', value: found }, 'the empty pointer is the whole document')
  t.same(readPointer(valueOf(parseStrictJson('{"a":[{"b":"\\u00e9"}]}', { numbers: 'text' })), '/a/0/b'), { kind: 'found', value: '\u00e9' }, 'escapes decoded by the token reader too')
})

t.test('JSON_POINTER_PATTERN: RFC 6901 syntax, as the callers file checks it', async (t) => {
  const pattern = new RegExp(JSON_POINTER_PATTERN)
  for (const pointer of ['', '/', '/amount', '/a~0b/c~1d', '/0/-']) t.ok(pattern.test(pointer), `${JSON.stringify(pointer)} is a pointer`)
  for (const pointer of ['amount', '/a~2', '/a~', '#/amount']) t.notOk(pattern.test(pointer), `${JSON.stringify(pointer)} is not`)
})

t.test('a held body is parsed once per reading mode, however many steps read it', async (t) => {
  const body = new HeldJson(Buffer.from('{"amount":1e400,"ref":"a"}'))
  const values = body.read()
  t.equal(body.read(), values, 'the same result for the second reader')
  t.same(values.ok && values.value, { amount: Infinity, ref: 'a' })
  const texts = body.read('text')
  t.not(texts, values, 'numbers as text are their own reading')
  t.same(texts.ok && texts.value, { amount: '1e400', ref: 'a' }, 'the exact source text of a number')
  t.equal(body.read('text'), texts)
})

/**
 * Whether a reading with numbers as values equals one with numbers as text (the token reader's),
 * number for number (-0 included), member for member in the same order, `__proto__` an own member.
 */
function sameReading (value: JsonValue, text: JsonValue): boolean {
  if (typeof value === 'number') return typeof text === 'string' && Object.is(value, Number(text))
  if (value === null || typeof value !== 'object' || text === null || typeof text !== 'object') return Object.is(value, text)
  if (Array.isArray(value) !== Array.isArray(text) || Object.getPrototypeOf(value) !== Object.getPrototypeOf(text)) return false
  const names = Object.getOwnPropertyNames(value)
  const textNames = Object.getOwnPropertyNames(text)
  if (names.join('\u0000') !== textNames.join('\u0000')) return false
  return names.every((name) => name === 'length' || sameReading((value as Record<string, JsonValue>)[name] as JsonValue, (text as Record<string, JsonValue>)[name] as JsonValue))
}

t.test('numbers as values (JSON.parse, checked) and as text (token by token) agree on everything else', async (t) => {
  const pointers = ['/a', '/b', '/a/b', '/__proto__', '/10', '/a/0', '/x\\y', '/"q"', '']
  let repeated = 0
  let checked = 0
  for (const text of generatedJsonTexts(3000, { repeatNames: true })) {
    const values = parseStrictJson(text)
    const texts = parseStrictJson(text, { numbers: 'text' })
    if (!values.ok || !texts.ok) { t.fail(`not read: ${text}`); continue }
    if (values.hasDuplicates) repeated++
    const same = values.hasDuplicates === texts.hasDuplicates &&
      sameReading(values.value, texts.value) &&
      pointers.every((pointer) => readPointer(values.value, pointer).kind === readPointer(texts.value, pointer).kind)
    if (!same) { t.fail(text); continue }
    checked++
  }
  t.equal(checked, 3000, 'every generated document')
  t.ok(repeated > 50 && repeated < 2950, `with and without repeated names (${repeated} of 3000 repeat one)`)
})

t.test('a repeated name is found however its strings are written', async (t) => {
  const cases: Array<[string, boolean]> = [
    ['{"a\\"":1,"a\\"":2}', true],
    ['{"a\\\\":1,"a\\\\":2}', true],
    ['{"a\\\\":1,"a":2}', false],
    ['{"a" :1, "a"\n:2}', true],
    ['{"a"\t:1,"a":2}', true],
    ['{"a"\r:1,"a":2}', true],
    ['{"a":1,"a"\t\r\n :2}', true],
    ['{"a\\\\\\"":1,"a\\\\\\"":2}', true],
    ['{"a":"\\":","a":1}', true],
    ['{"a":"b","c":"a"}', false],
    ['["a", ":", "b"]', false],
    ['{"k":{"k":{"k":1}}}', false],
    ['{"k":{"k":1,"k":1}}', true],
    [`{"${'n'.repeat(5000)}":1,"${'n'.repeat(4999)}":2}`, false],
    [`{"${'n'.repeat(5000)}":1,"${'n'.repeat(5000)}":2}`, true],
  ]
  for (const [text, repeats] of cases) {
    for (const numbers of ['value', 'text'] as const) {
      const read = parseStrictJson(text, { numbers })
      t.equal(read.ok && read.hasDuplicates, repeats, `${numbers}: ${text.slice(0, 60)}`)
    }
  }
})

t.test('a text nested past the bound is refused before JSON.parse would build it', async (t) => {
  // JSON.parse builds any depth (1 MiB of `[` took 130 ms and 38 MiB); the token reader stops at the bound.
  const calls = t.capture(JSON, 'parse', JSON.parse)
  const deep = '['.repeat(512 * 1024) + ']'.repeat(512 * 1024)
  t.match(parseStrictJson(deep), { ok: false, reason: 'too-deep' })
  t.match(parseStrictJson(`{"a":${'['.repeat(MAX_JSON_DEPTH + 1)}`), { ok: false, reason: 'too-deep' }, 'unclosed as well')
  t.match(parseStrictJson(`${'{"a":'.repeat(MAX_JSON_DEPTH + 2)}1${'}'.repeat(MAX_JSON_DEPTH + 2)}`), { ok: false, reason: 'too-deep' }, 'objects as well as arrays')
  t.match(parseStrictJson('{"a":"never closed'), { ok: false, reason: 'syntax' }, 'an unterminated string')
  t.equal(calls().length, 0, 'JSON.parse was never asked')
  t.equal(parseStrictJson('[[1]]').ok, true)
  t.equal(calls().length, 1, 'and is for a text within the bound')
})

t.test('the nesting bound is the same either way', async (t) => {
  const nested = (levels: number, inner = ''): string => '['.repeat(levels) + inner + ']'.repeat(levels)
  for (const numbers of ['value', 'text'] as const) {
    t.equal(parseStrictJson(nested(MAX_JSON_DEPTH + 1), { numbers }).ok, true, `${numbers}: ${MAX_JSON_DEPTH + 1} empty arrays`)
    t.match(parseStrictJson(nested(MAX_JSON_DEPTH + 1, '1'), { numbers }), { ok: false, reason: 'too-deep' }, `${numbers}: a value under them`)
    t.match(parseStrictJson(nested(MAX_JSON_DEPTH + 2), { numbers }), { ok: false, reason: 'too-deep' }, `${numbers}: one more array`)
    t.same(parseStrictJson(`{"a":${nested(MAX_JSON_DEPTH)}}`, { numbers }), { ok: true, value: { a: JSON.parse(nested(MAX_JSON_DEPTH)) as JsonValue }, hasDuplicates: false }, `${numbers}: under an object`)
    // A value past the bound must not be counted as a member, nor as nothing: either count can equal the names of a text.
    t.match(parseStrictJson(`{"b":${'['.repeat(MAX_JSON_DEPTH - 1)}{"c":1}${']'.repeat(MAX_JSON_DEPTH - 1)}}`, { numbers }), { ok: false, reason: 'too-deep' }, `${numbers}: a member's value past the bound`)
    t.match(parseStrictJson(`{"a":1,"a":1,"b":${nested(MAX_JSON_DEPTH, '1')}}`, { numbers }), { ok: false, reason: 'too-deep' }, `${numbers}: a value past the bound beside a repeated name`)
  }
})

t.test('JSON.parse reads every text without a repeated name or too deep a nesting, once', async (t) => {
  const nested = (levels: number, inner = ''): string => '['.repeat(levels) + inner + ']'.repeat(levels)
  const texts = [
    '{"a" :1}', '{"a"\t:1}', '{"a"\n:1}', '{"a"\r:1}', '{"a" \t\r\n:1,"b":2}',
    '{"a\\"":1,"b":2}', '{"a\\"b":1}', '["x\\"y", "z"]', '{"a\\\\":1,"b":2}', '{"a\\\\\\"":1}', '{"\\"":{"\\\\":[]}}',
    '{"a":":"}', '["a" : 1]', '["a" , "b"]', '"x"', '"x" ', '{"":{"":{}}}', '{"a":null,"b":[null,{}]}',
    `["${'['.repeat(MAX_JSON_DEPTH + 2)}"]`, `{"a":"${'{'.repeat(MAX_JSON_DEPTH + 2)}"}`,
    `[${'[],'.repeat(MAX_JSON_DEPTH + 2)}[]]`, `[${'{},'.repeat(MAX_JSON_DEPTH + 2)}{}]`,
    nested(MAX_JSON_DEPTH + 1), `{"a":${nested(MAX_JSON_DEPTH)}}`, `[${nested(MAX_JSON_DEPTH)},${nested(MAX_JSON_DEPTH)}]`,
    // Fewer than the differential test above: this one reads each text three times, and every mutant runs it.
    ...generatedJsonTexts(1000, { repeatNames: true }),
  ]
  // Collected, not asserted one by one: the generated texts are too many for one line each.
  const wrong: string[] = []
  let taken = 0
  for (const text of texts) {
    const strict = parseStrictJson(text, { numbers: 'text' })
    const fast = readWithJsonParse(text)
    if ((fast !== null) !== (strict.ok && !strict.hasDuplicates)) wrong.push(`${fast === null ? 'declined' : 'taken'}: ${text.slice(0, 80)}`)
    else if (fast?.ok === true && strict.ok && !sameReading(fast.value, strict.value)) wrong.push(`another reading: ${text.slice(0, 80)}`)
    else if (fast !== null) taken++
  }
  t.same(wrong, [])
  t.ok(taken > 500, `${taken} texts read by JSON.parse alone`)
  const declined = ['{"a":1,"a":2}', '{"a" :1,"a"\t:2}', '{"a\\"":1,"a\\"":2}', '[{"a":1,"a":1}]', '{', '{"a":"b', '"\\"', nested(MAX_JSON_DEPTH + 1, '1'), nested(MAX_JSON_DEPTH + 2)]
  for (const text of declined) t.equal(readWithJsonParse(text), null, `declined: ${JSON.stringify(text.slice(0, 60))}`)
})
