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
  t.match(child.stdout(), /^usage: payments-auth-proxy \[serve \| check \| caller-key \| webhooks \| webhook-secrets \| approvals \| payments \| console-link \| --help\]$/m)
})

// Issue 43 item 13: `<command> --help` (or -h) prints that command's usage and exits 0 without
// reading the configuration, for every command the usage lists (a new one is covered by this loop).
t.test('every command\'s --help and -h print its usage and exit 0, with or without configuration', async (t) => {
  const main = runCli(t, ['--help'], {})
  await main.exited
  const commands = /^usage: payments-auth-proxy \[(.*) \| --help\]$/m.exec(main.stdout())?.[1]?.split(' | ') ?? []
  t.ok(commands.length >= 6, commands.join(', '))
  const configured = { PAYMENTS_FIAT_BASE_URL: 'https://api.example.test/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_usage_key', PAYMENTS_SANDBOX_PUBLIC_KEY: 'usage-public-key' }
  for (const command of commands) {
    for (const [label, args, env] of [
      ['--help, no configuration', [command, '--help'], {}],
      ['-h, configured', [command, '-h'], configured],
    ] as const) {
      const child = runCli(t, [...args], env)
      const { code } = await child.exited
      t.equal(code, 0, `${command} ${label}: exit 0\n${child.stderr()}`)
      t.match(child.stdout(), new RegExp(`^usage: payments-auth-proxy ${command}\\b`), `${command} ${label}: its usage`)
      t.equal(child.stderr(), '', `${command} ${label}: nothing on stderr`)
    }
  }
})

t.test('the inbox\'s and approvals\' --help give their verbs, also after a verb', async (t) => {
  for (const [args, verbs] of [
    [['webhooks', '--help'], ['list', 'show', 'replay']],
    [['webhooks', 'list', '--help'], ['list', 'show', 'replay']],
    [['approvals', '--help'], ['list', 'show', 'approve', 'reject']],
    [['approvals', 'approve', 'apr_x', '-h'], ['list', 'show', 'approve', 'reject']],
    [['payments', '--help'], ['list', 'show', 'recheck']],
  ] as const) {
    const child = runCli(t, [...args], {})
    t.equal((await child.exited).code, 0, args.join(' '))
    for (const verb of verbs) t.match(child.stdout(), new RegExp(`^\\s*(usage: )?payments-auth-proxy ${args[0]} ${verb}\\b`, 'm'), `${args.join(' ')}: ${verb}`)
  }
})
