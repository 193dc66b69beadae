/**
 * Approvals (SPEC §11) as a feature: their share of the proxy, the `approvals` command and the `check` section of their
 * store.
 */
import { configuredCommand, type Feature } from '../feature/feature.js'
import { resolveApprovals } from '../config/approval-settings.js'

export const approvalsFeature: Feature = {
  name: 'approvals',
  settings: ({ settings, sealingSecret, problems }) => ({
    approvals: resolveApprovals(settings, sealingSecret, problems),
  }),
  commands: {
    approvals: configuredCommand(
      'list, show, approve or reject held requests (payments-auth-proxy approvals --help)',
      async () => (await import('./approvals-command.js')).runApprovalsCommand,
      async () => (await import('./approvals-command.js')).APPROVALS_USAGE,
    ),
  },
  // Loaded only with a callers file: approvals exist only there (approveAbove).
  callersReloadCheck: async () => (await import('./approval-start-checks.js')).approveAboveNeedsRestart,
  proxy: async (context) => {
    const { callers } = context
    return callers === null ? null : await (await import('./approvals-part.js')).approvalsPart({ ...context, callers })
  },
  // Approvals exist only in a callers file (approveAbove): without one read cleanly there is nothing to check.
  async check ({ config, log, redis, storage, callers }) {
    if (callers === null) return null
    return await (await import('./check-approvals.js')).checkApprovals(config, callers, { log, storage }, redis)
  },
}
