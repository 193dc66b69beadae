import t from 'tap'
import { terminalJson, terminalText } from '../../src/text/terminal-safe.js'

t.test('terminalText spells out what a terminal would act on or hide', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['inv-9\x1b[49G5 KES', 'inv-9\\x1b[49G5 KES', 'an escape sequence that moves the cursor'],
    ['a\rb', 'a\\rb', 'a bare CR that would forge a row'],
    ['a\nb\tc', 'a\\nb\\tc', 'a newline and a tab that would forge rows and columns'],
    ['x\x00y\x7fz', 'x\\x00y\\x7fz', 'NUL and DEL'],
    ['x\u009b31my', 'x\\x9b31my', 'a C1 CSI'],
    ['abc\u202edcba', 'abc\\u202edcba', 'a right-to-left override'],
    ['inv\u200b-9', 'inv\\u200b-9', 'a zero-width space'],
    ['a\u2028b', 'a\\u2028b', 'a line separator'],
    ['\ud800', '\\ud800', 'a lone surrogate'],
    ['back\\x1b', 'back\\\\x1b', 'a backslash, so a typed escape is not taken for ours'],
    ['order-4711 ümlaut 日本 😀', 'order-4711 ümlaut 日本 😀', 'printable text of any script unchanged'],
  ]
  for (const [input, printed, what] of cases) t.equal(terminalText(input), printed, what)
})

t.test('terminalJson is the same JSON value with nothing raw a terminal acts on', async (t) => {
  const values: unknown[] = [
    { reference: 'inv-9\x1b[49G5 KES', reason: 'a\u009bb\u202ec\u200bd\u2028e\x7f' },
    ['\ud800', 'plain', 5, null],
    'x',
  ]
  for (const value of values) {
    for (const space of [undefined, 2]) {
      const text = terminalJson(value, space)
      t.same(JSON.parse(text), value, 'parses back to the same value')
      t.notMatch(text.replaceAll('\n', ''), /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u, 'no control, format or separator character left raw but the indentation\'s newlines')
      if (space === 2 && typeof value === 'object') t.match(text, /\n {2}/, 'still indented')
    }
  }
})
