import t from 'tap'
import { HeldJson } from '../../src/json/held-json.js'
import { readReference, readReferenceInFull } from '../../src/json/reference.js'
import type { StrictJson } from '../../src/json/strict-json.js'
import { generatedJsonTexts } from '../helpers/generated-json.js'
import { printable } from '../helpers/printable.js'

/** A held body that counts its strict readings: the test sees when the reading was spared. */
class CountedJson extends HeldJson {
  reads = 0
  override read (numbers: 'value' | 'text' = 'value'): StrictJson {
    this.reads++
    return super.read(numbers)
  }
}

const POINTERS = ['/externalReference', '/a', '/é', '/😀', '/a b', '/"q"', '/x\\y', '/__proto__', '/10', '/', '/a/b', '/é/a', '/B/0', '/a~1b', '/a~0b', '', 'a']

t.test('read in full unless the body cannot hold the first name, and the same answer either way', async (t) => {
  const texts = [
    ...generatedJsonTexts(600, { repeatNames: true }),
    '{"externalReference":"r-1"}', '{"externalReference":""}', '{"externalReference":"r-1","externalReference":"r-2"}',
    '{"ext\\u0065rnalReference":"r-1"}', '{"a":{"b":"x"},"a":{}}', '{"a":{},"a":{}}', '{"a/b":"s","a~b":"t"}',
    '{"note":"externalReference"}', '["externalReference"]', '{"externalReference":"r-1"', 'not json', '',
  ]
  const bodies = [
    ...texts.map((text) => Buffer.from(text)),
    Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
    Buffer.concat([Buffer.from('{"externalReference":"'), Buffer.from([0xff]), Buffer.from('"}')]),
  ]
  let spared = 0
  let read = 0
  for (const bytes of bodies) {
    for (const pointer of POINTERS) {
      const counted = new CountedJson(bytes)
      const answer = readReference(counted, undefined, pointer)
      const full = readReferenceInFull(new HeldJson(bytes), pointer)
      if (counted.reads === 0) spared++
      else read++
      if (JSON.stringify(answer) !== JSON.stringify(full)) t.fail(`${printable(pointer)} in ${printable(bytes.toString('latin1'))}: ${printable(JSON.stringify(answer))} but read in full ${printable(JSON.stringify(full))}`)
    }
  }
  t.pass(`${spared} readings spared and ${read} read in full, every answer the same`)
  t.ok(spared > 1000, 'most pairs of a body and a pointer are judged without reading')
  t.ok(read > 1000, 'and many are read')
})

t.test('which bodies are read', async (t) => {
  const cases: Array<[string, string, boolean, string]> = [
    ['{"amount":1500,"currency":"KES"}', '/externalReference', false, 'no such name and no escape: spared'],
    ['{"externalReference":"r-1"}', '/externalReference', true, 'the name is there'],
    ['{"note":"a\\"b"}', '/externalReference', true, 'an escape could spell the name'],
    ['{"note":"externalReference"}', '/externalReference', true, 'the name as a value is enough to read'],
    ['[{"r":"x"}]', '/0/r', true, 'a first segment that could be an array index'],
    ['{"r":"x"}', '', true, 'the whole document'],
    ['{"data":{"r":"x"}}', '/ref/r', false, 'the first name is missing: nothing on the way can be found'],
  ]
  for (const [text, pointer, reads, why] of cases) {
    const counted = new CountedJson(Buffer.from(text))
    readReference(counted, undefined, pointer)
    t.equal(counted.reads > 0, reads, why)
  }
  const counted = new CountedJson(Buffer.from('{"externalReference":"r-1"}'))
  t.same(readReference(counted, 'gzip', '/externalReference'), { kind: 'none' }, 'a compressed body is not read at all')
  t.equal(counted.reads, 0)
})
