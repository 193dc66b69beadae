/**
 * The one reading of an /mcp body (envelope-reading.ts), table-tested: what is one JSON-RPC message,
 * what is a batch, what is a parse error (a byte-order mark and invalid UTF-8 included), and the
 * bytes of a tool call's `body` argument, found where JSON.parse found the value it kept.
 */
import t from 'tap'
import { readEnvelope } from '../../src/mcp/envelope-reading.js'

const BOM = '\ufeff'

t.test('the kind of a body: one message, a batch, or a parse error', async (t) => {
  const cases: Array<[string, Buffer, string]> = [
    ['a message', Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list"}'), 'message'],
    ['a message after JSON whitespace', Buffer.from(' \t\r\n{"jsonrpc":"2.0","id":1,"method":"tools/list"}'), 'message'],
    ['a batch', Buffer.from('[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]'), 'batch'],
    ['an empty batch after whitespace', Buffer.from('\n [ ]'), 'batch'],
    ['a message behind a UTF-8 BOM', Buffer.from(`${BOM}{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), 'parse-error'],
    ['a batch behind a UTF-8 BOM', Buffer.from(`${BOM}[]`), 'parse-error'],
    ['a batch in UTF-16LE', Buffer.from('[]', 'utf16le'), 'parse-error'],
    ['invalid UTF-8 in a string', Buffer.concat([Buffer.from('{"method":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]), 'parse-error'],
    ['a string', Buffer.from('"tools/call"'), 'parse-error'],
    ['null', Buffer.from('null'), 'parse-error'],
    ['nothing', Buffer.alloc(0), 'parse-error'],
    ['not JSON', Buffer.from('{"method":'), 'parse-error'],
  ]
  for (const [label, bytes, kind] of cases) t.equal(readEnvelope(bytes).kind, kind, label)
})

t.test('a tool call\'s body: the bytes as written, the member JSON.parse kept, or none', async (t) => {
  const call = (params: string, method = 'tools/call'): string => `{"jsonrpc":"2.0","id":1,"method":"${method}","params":${params}}`
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`
  const cases: Array<[string, string, string | null]> = [
    ['an object with brackets and quotes in strings', call('{"name":"x","arguments":{"body":{"a":[1,"]}\\"",{"b":null}]},"after":1}}'), '{"a":[1,"]}\\"",{"b":null}]}'],
    ['whitespace around every token', call(' { "arguments" : { "body" :  [ 1 , 2 ]  } } '), '[ 1 , 2 ]'],
    ['a number as written', call('{"arguments":{"body":1e3}}'), '1e3'],
    ['a string with an escaped quote and a backslash', call('{"arguments":{"body":"a\\"b\\\\"}}'), '"a\\"b\\\\"'],
    ['null', call('{"arguments":{"body":null,"x":true}}'), 'null'],
    ['a repeated body: the last', call('{"arguments":{"body":{"amount":1},"body":{"amount":2}}}'), '{"amount":2}'],
    ['repeated arguments: the last, without a body', call('{"arguments":{"body":1},"arguments":{"x":2}}'), null],
    ['a name spelled with an escape', call('{"arguments":{"b\\u006fdy":[true]}}'), '[true]'],
    ['a body 100,000 deep', call(`{"arguments":{"body":${deep}}}`), deep],
    ['no body', call('{"name":"x","arguments":{"path":"/p"}}'), null],
    ['"body" only inside a string', call('{"arguments":{"x":"\\"body\\":1"}}'), null],
    ['a body elsewhere', call('{"body":1,"arguments":{"x":{"body":2}}}'), null],
    ['arguments not an object', call('{"arguments":["body",1]}'), null],
    ['not a tool call', call('{"arguments":{"body":1}}', 'tools/list'), null],
  ]
  for (const [label, text, body] of cases) {
    const reading = readEnvelope(Buffer.from(text))
    if (reading.kind !== 'message') { t.fail(`${label}: read as ${reading.kind}`); continue }
    t.equal(reading.toolBody?.toString('utf8') ?? null, body, label)
    const params = reading.message['params'] as { arguments: Record<string, unknown> }
    if (body !== null && label !== 'a body 100,000 deep') t.same(JSON.parse(body), params.arguments['body'], `${label}: the value the SDK is handed`)
  }
})
