/**
 * Whether a request falls under SPEC §8, and under which record key and fingerprint. Pure: request
 * facts in, a verdict out, table-tested. The body is read as JSON whatever Content-Type claims; a
 * compressed body is not read (the provider would read the decoded one, we cannot judge it).
 */
import { hash } from 'node:crypto';
import { ExternalReferenceRequiredError } from '../errors.js';
import { parseStrictJsonBytes, readPointer } from '../json/strict-json.js';
import { fingerprintOf } from './fingerprint.js';
/** The methods whose requests carry a transaction and are keyed by its reference (SPEC §8). */
export const KEYED_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const SKIP = { kind: 'skip' };
export function decideIdempotency(facts) {
    if (!KEYED_METHODS.has(facts.method) || !Buffer.isBuffer(facts.body) || isEncoded(facts.contentEncoding))
        return SKIP;
    const parsed = parseStrictJsonBytes(facts.body);
    if (!parsed.ok)
        return SKIP;
    const reference = readPointer(parsed.value, facts.keyPointer);
    if (reference.kind === 'ambiguous') {
        return { kind: 'refuse', error: new ExternalReferenceRequiredError('The body repeats a member name on the way to the idempotency reference (PROXY_IDEMPOTENCY_KEY_POINTER): send it once') };
    }
    if (reference.kind === 'missing' || typeof reference.value !== 'string' || reference.value === '')
        return SKIP;
    return {
        kind: 'check',
        key: recordKey(facts, reference.value),
        fingerprint: fingerprintOf(parsed.hasDuplicates ? null : parsed.value, facts.body),
    };
}
/** Hashed, so a long reference never makes a long key and the store holds nothing a caller sent. */
export function recordKey(facts, reference) {
    return hash('sha256', JSON.stringify([facts.callerId, facts.environment, facts.iface, facts.method, facts.path, reference]));
}
function isEncoded(value) {
    if (value === undefined)
        return false;
    const codings = (Array.isArray(value) ? value.join(',') : value).split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '');
    return codings.some((c) => c !== 'identity');
}
/** SPEC §8: definitive answers are 2xx and 4xx other than 401, 408, 409, 425, 429. */
export function isRecordable(status) {
    if (status >= 200 && status < 300)
        return true;
    return status >= 400 && status < 500 && ![401, 408, 409, 425, 429].includes(status);
}
/** Headers Fastify (or the connection) sets for each answer: a replay gets fresh ones. */
const NOT_REPLAYED = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);
export function headersToRecord(headers) {
    const kept = {};
    for (const [name, value] of Object.entries(headers)) {
        if (value === undefined || NOT_REPLAYED.has(name.toLowerCase()))
            continue;
        kept[name.toLowerCase()] = typeof value === 'number' ? String(value) : value;
    }
    return kept;
}
//# sourceMappingURL=idempotency-decision.js.map