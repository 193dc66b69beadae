export const ENVIRONMENTS = ['production', 'sandbox'];
export const INTERFACES = ['fiat', 'crypto'];
export const TOKEN_PATH = '/auth/generate-bearer-token';
//# sourceMappingURL=config.js.map