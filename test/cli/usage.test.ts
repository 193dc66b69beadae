/** Issue 35 item 14: the usage text's command column lines up, and --help exits 0 with it. */
import t from 'tap'
import { runCli } from '../helpers/child-proxy.js'

t.test('--help prints the usage with every description starting in one column', async (t) => {
  const child = runCli(t, ['--help'], {})
  t.equal((await child.exited).code, 0)
  const commands = child.stdout().split('\n').filter((l) => /^ {2}\S/.test(l))
  t.ok(commands.length >= 3, commands.join('\n'))
  const columns = new Set(commands.map((l) => /^ {2}\S+ +/.exec(l)?.[0].length))
  t.equal(columns.size, 1, `one description column: ${[...columns].join(', ')}`)
  t.match(child.stdout(), /^usage: payments-auth-proxy \[serve \| check \| caller-key \| webhooks \| webhook-secrets \| approvals \| payments \| --help\]$/m)
})
