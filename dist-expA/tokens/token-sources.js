import { TokenSource } from './token-source.js';
export function createTokenSources(config, deps) {
    const sources = new Map();
    for (const environment of Object.values(config.environments)) {
        sources.set(environment.name, new TokenSource({
            environment,
            fetchToken: deps.fetchToken,
            clock: deps.clock,
            log: deps.log,
            random: deps.random,
            observer: deps.observer,
            settings: {
                refreshMarginMs: config.token.refreshMarginS * 1000,
                retryMinMs: config.token.retryMinS * 1000,
                retryMaxMs: config.token.retryMaxS * 1000,
            },
        }));
    }
    return sources;
}
//# sourceMappingURL=token-sources.js.map