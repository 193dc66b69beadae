/** Public entry of the fake provider for tests, the demo and other tooling. */

export { DEMO_CREDENTIALS, startFakeProvider } from './fake-provider.js'
export type {
  FakeProvider, FakeProviderOptions, ProviderCredentials, ProviderEnvironment, ProviderInterface,
  TokenHandler, TokenRequestRecord, UpstreamHandler, UpstreamRequestRecord,
} from './fake-provider.js'
export { signJwt, verifyJwt } from './jwt.js'
export { PROVIDER_PORT_VARIABLES, providerPorts, type ProviderPorts } from './provider-ports.js'
export { proxyEnvFor } from './proxy-env.js'
export type { FakeTransaction, TransactionOptions } from './types.js'
