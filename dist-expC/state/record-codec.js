export function encodeRecord(record) {
    return JSON.stringify({ f: record.fingerprint, s: record.status, h: record.headers, b: record.body.toString('base64') });
}
export function decodeRecord(text) {
    let parsed;
    try {
        parsed = JSON.parse(text);
    }
    catch {
        return null;
    }
    if (typeof parsed !== 'object' || parsed === null)
        return null;
    const { f, s, h, b } = parsed;
    if (typeof f !== 'string' || typeof s !== 'number' || typeof b !== 'string' || !isHeaders(h))
        return null;
    return { fingerprint: f, status: s, headers: h, body: Buffer.from(b, 'base64') };
}
function isHeaders(value) {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
        return false;
    return Object.values(value).every((v) => typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string')));
}
//# sourceMappingURL=record-codec.js.map