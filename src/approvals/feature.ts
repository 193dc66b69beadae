/** Approvals (SPEC §11) as a feature: their share of the proxy, the `approvals` command and the `check` section of their store. */
import type { Feature } from '../feature/feature.js'

export const approvalsFeature: Feature = {
  name: 'approvals',
  commands: {
    approvals: {
      summary: 'list, show, approve or reject held requests (payments-auth-proxy approvals --help)',
      usage: async () => (await import('./approvals-command.js')).APPROVALS_USAGE,
      async run ({ args, io, clock, configured }) {
        const { config, log, storage } = configured()
        const { runApprovalsCommand } = await import('./approvals-command.js')
        return await runApprovalsCommand(args, config, { log, storage }, { ...io, nowMs: () => clock.wallMs() })
      },
    },
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
