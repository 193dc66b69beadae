/** The console (SPEC §14) as a feature: its listener beside the proxy, the `console-link` command and its `check` lines. */
import type { Feature } from '../feature/feature.js'

export const consoleFeature: Feature = {
  name: 'console',
  commands: {
    'console-link': {
      summary: 'print a single-use sign-in link for the console: console-link --as <email>',
      async run ({ args, io, clock, configured }) {
        const { config, log, storage } = configured()
        const { runConsoleLinkCommand } = await import('./console-link-command.js')
        return await runConsoleLinkCommand(args, config, { log, storage }, { ...io, nowMs: () => clock.wallMs() })
      },
    },
  },
  sidecar: async (context) => {
    const settings = context.config.console
    return settings === null ? null : (await import('./console-part.js')).consolePart(context, settings)
  },
  // Its lines never fail the check: they say what a person opening it will find.
  async check ({ config }) {
    if (config.console === null) return null
    return { ok: true, lines: await (await import('./check-console.js')).checkConsole(config.console) }
  },
}
