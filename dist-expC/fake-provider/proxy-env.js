/** The proxy's variables that put it in front of a running fake provider with the demo credentials. */
import { DEMO_CREDENTIALS } from './fake-provider.js';
export function proxyEnvFor(provider) {
    return {
        PAYMENTS_FIAT_BASE_URL: provider.fiatBaseUrl,
        PAYMENTS_CRYPTO_BASE_URL: provider.cryptoBaseUrl,
        PAYMENTS_PRODUCTION_API_KEY: DEMO_CREDENTIALS.production.apiKey,
        PAYMENTS_PRODUCTION_PUBLIC_KEY: DEMO_CREDENTIALS.production.publicKey,
        PAYMENTS_SANDBOX_API_KEY: DEMO_CREDENTIALS.sandbox.apiKey,
        PAYMENTS_SANDBOX_PUBLIC_KEY: DEMO_CREDENTIALS.sandbox.publicKey,
        PROXY_DEFAULT_ENVIRONMENT: 'sandbox',
    };
}
//# sourceMappingURL=proxy-env.js.map