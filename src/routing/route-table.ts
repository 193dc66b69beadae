/**
 * The routes of SPEC §3 as data: which incoming prefix goes to which environment's base URL.
 * Routes of an environment without credentials, or an interface without a base URL, stay in the
 * table with the reason they cannot forward, so clients get a precise 404 instead of a bare one.
 */
import type { CanonicalPath } from './canonical-path.js'
import { ENVIRONMENTS, INTERFACES, type Config, type EnvironmentName, type InterfaceName } from '../config/config.js'

export interface RouteSpec {
  prefix: string
  environment: EnvironmentName | null
  interface: InterfaceName
  /** Upstream origin and base path, when the route can forward. */
  upstream: { origin: string, basePath: string } | null
  /** Why the route cannot forward (answered as ENVIRONMENT_NOT_CONFIGURED). */
  problem: string | null
  /**
   * Paths below this route's base that are another environment's base (the crypto sandbox base
   * `/api/sandbox` lies under the production `/api`): lower case, refused as ROUTE_NOT_FOUND so a
   * route never carries its token to another environment (SPEC §3).
   */
  foreignPaths: readonly string[]
}

export function buildRouteTable (config: Config): RouteSpec[] {
  const routes: RouteSpec[] = []
  for (const environment of ENVIRONMENTS) {
    for (const iface of INTERFACES) routes.push(route(config, `/${environment}/${iface}`, environment, iface))
  }
  for (const iface of INTERFACES) {
    if (config.defaultEnvironment === null) {
      routes.push({
        prefix: `/${iface}`,
        environment: null,
        interface: iface,
        upstream: null,
        foreignPaths: [],
        problem: `Both environments are configured and PROXY_DEFAULT_ENVIRONMENT is not set: call /production/${iface}/... or /sandbox/${iface}/..., or set PROXY_DEFAULT_ENVIRONMENT`,
      })
    } else {
      routes.push(route(config, `/${iface}`, config.defaultEnvironment, iface))
    }
  }
  return routes
}

function route (config: Config, prefix: string, environment: EnvironmentName, iface: InterfaceName): RouteSpec {
  const env = config.environments[environment]
  if (env === undefined) {
    const upper = environment.toUpperCase()
    return { prefix, environment, interface: iface, upstream: null, foreignPaths: [], problem: `The ${environment} environment is not configured: set PAYMENTS_${upper}_API_KEY and PAYMENTS_${upper}_PUBLIC_KEY` }
  }
  const base = env.baseUrls[iface]
  if (base === undefined) {
    const variable = iface === 'crypto' ? 'PAYMENTS_CRYPTO_BASE_URL' : 'PAYMENTS_FIAT_BASE_URL'
    return { prefix, environment, interface: iface, upstream: null, foreignPaths: [], problem: `The ${iface} interface is not configured: set ${variable}` }
  }
  const url = new URL(base)
  const basePath = url.pathname === '/' ? '' : url.pathname
  return {
    prefix,
    environment,
    interface: iface,
    upstream: { origin: url.origin, basePath },
    problem: null,
    foreignPaths: foreignPathsUnder(config, url, environment),
  }
}

/** Every other configured base (any environment, any interface) on the same origin that lies under `base`. */
export function foreignPathsUnder (config: Pick<Config, 'baseUrls'>, base: URL, environment: EnvironmentName): string[] {
  const basePath = (base.pathname === '/' ? '' : base.pathname).toLowerCase()
  const out: string[] = []
  for (const other of ENVIRONMENTS) {
    if (other === environment) continue
    for (const iface of INTERFACES) {
      const candidate = config.baseUrls[other][iface]
      if (candidate === undefined) continue
      const url = new URL(candidate)
      const path = url.pathname.toLowerCase()
      if (url.origin === base.origin && path.startsWith(`${basePath}/`)) out.push(path.slice(basePath.length))
    }
  }
  return out
}

/** Whether a folded canonical path below a route's base reaches into one of its foreign paths. */
export function reachesForeignBase (folded: CanonicalPath, foreignPaths: readonly string[]): boolean {
  if (foreignPaths.length === 0) return false
  return foreignPaths.some((foreign) => folded === foreign || folded.startsWith(`${foreign}/`))
}
