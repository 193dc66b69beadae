/**
 * The console (SPEC §14) as a feature: its listener beside the proxy, the `console-link` command and its `check` lines.
 */
import { configuredCommand, type Feature } from '../feature/feature.js'
import { resolveConsole } from '../config/console-settings.js'

export const consoleFeature: Feature = {
  name: 'console',
  settings: ({ settings, problems, warnings }) => ({ console: resolveConsole(settings, problems, warnings) }),
  commands: {
    'console-link': configuredCommand(
      'print a single-use sign-in link for the console: console-link --as <email>',
      async () => (await import('./console-link-command.js')).runConsoleLinkCommand,
    ),
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
