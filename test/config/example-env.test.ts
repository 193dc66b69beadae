import { readFileSync } from 'node:fs'
import t from 'tap'
import { KNOWN_VARIABLES } from '../../src/config/schema.js'
import { loadConfig } from '../../src/load-config.js'

const text = readFileSync(new URL('../../config.example.env', import.meta.url), 'utf8')

t.test('config.example.env documents every setting the schema knows', async (t) => {
  for (const name of KNOWN_VARIABLES) t.match(text, new RegExp(`^#? ?${name}=`, 'm'), `${name} is documented`)
})

t.test('config.example.env loads as it is', async (t) => {
  const env = Object.fromEntries(text.split('\n').filter((l) => /^[A-Z_]+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
  const { config } = loadConfig(env)
  t.equal(config.environments.sandbox?.tokenUrl, 'https://api-v2.honeycoin.app/api/sandbox/b2b/auth/generate-bearer-token')
  t.equal(config.baseUrls.sandbox.crypto, 'https://crypto.honeycoin.app/api/sandbox')
})
