/**
 * `payments-auth-proxy caller-key` (SPEC §7): a new random caller key and the `keySha256` line for
 * the callers file. Needs no configuration, so an operator can mint a key anywhere; the key is
 * printed once and never stored by the proxy.
 */
import { randomBytes } from 'node:crypto';
import { keySha256 } from './judge-caller.js';
export function newCallerKey() {
    const key = `pak_${randomBytes(32).toString('base64url')}`;
    return { key, keySha256: keySha256(key) };
}
export function callerKeyReport() {
    const { key, keySha256: hash } = newCallerKey();
    return `${key}\nkeySha256: ${hash}\n`;
}
//# sourceMappingURL=caller-key-command.js.map