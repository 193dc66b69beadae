/** Public entry of the fake provider for tests, the demo and other tooling. */
export { DEMO_CREDENTIALS, startFakeProvider } from './fake-provider.js';
export { signJwt, verifyJwt } from './jwt.js';
export { proxyEnvFor } from './proxy-env.js';
//# sourceMappingURL=index.js.map