/**
 * SPEC §5: an upstream answer containing `IP_NOT_ALLOWED` means the provider refused this proxy's
 * address (production fiat payouts may be limited to an IPv4 allowlist). It is logged as an error
 * naming the current egress IP and what to do about it, and counted.
 */
import type { FastifyRequest } from 'fastify'
import { ALLOWLIST_HINT, type EgressView } from './egress-reporter.js'

export interface IpNotAllowedDiagnosis {
  ipNotAllowed(request: FastifyRequest, route: { environment: string | null, interface: string }): void
}

export function createIpNotAllowedDiagnosis (
  egress: EgressView,
  count: (environment: string, iface: string) => void,
): IpNotAllowedDiagnosis {
  return {
    ipNotAllowed (request, route) {
      count(route.environment ?? '', route.interface)
      request.log.error({
        environment: route.environment,
        interface: route.interface,
        egressIp: egress.current(),
        hint: `the provider refused this proxy's address: ${ALLOWLIST_HINT}`,
      }, 'upstream answered IP_NOT_ALLOWED')
    },
  }
}
