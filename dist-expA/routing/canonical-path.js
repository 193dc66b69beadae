/**
 * One canonical, decoded view of the request path, computed before routing, so that routing, the
 * token-endpoint block and forwarding all judge the same string. Anything that could change
 * meaning between this proxy and the provider is refused instead of normalised: dot segments in
 * any encoding, encoded slashes and backslashes, double encoding, control characters, empty
 * segments (`//host`), look-alike dots and slashes, and absolute-form targets.
 */
/** RFC 3986 unreserved characters: the only ones whose percent-encoding is decoded. */
const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** pchar minus pct-encoded: unreserved, sub-delims, ':' and '@' (RFC 3986 §3.3). */
const PCHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]*$/;
/** Paths made only of these characters, without dots, are canonical as they are. */
const FAST_PATH = /^(?:\/[A-Za-z0-9\-_~!$&'()*+,;=:@]+)*\/?$/;
/**
 * The query string is forwarded byte for byte (SPEC §3), including the `[ ]` and `{ }` that qs and
 * axios write unencoded; only what could split or end the request line is refused.
 */
const QUERY = /^[\x21-\x22\x24-\x7e]*$/;
/** A request target's path and query string (without the `?`): the one place they are told apart. */
export function splitTarget(target) {
    const q = target.indexOf('?');
    return q === -1 ? [target, ''] : [target.slice(0, q), target.slice(q + 1)];
}
export function canonicalizeTarget(target) {
    if (target.charCodeAt(0) !== 47 /* / */)
        return { ok: false, reason: 'the request target must be a path' };
    const [rawPath, query] = splitTarget(target);
    if (query !== '' && !QUERY.test(query))
        return { ok: false, reason: 'the query string contains characters that must be percent-encoded' };
    if (FAST_PATH.test(rawPath))
        return { ok: true, path: rawPath, query };
    const segments = rawPath.slice(1).split('/');
    const out = [];
    for (let i = 0; i < segments.length; i++) {
        const segment = segments[i] ?? '';
        if (segment === '' && i < segments.length - 1)
            return { ok: false, reason: 'empty path segment (double slash)' };
        const canonical = canonicalSegment(segment);
        if (typeof canonical !== 'string')
            return canonical;
        out.push(canonical);
    }
    return { ok: true, path: `/${out.join('/')}`, query };
}
function canonicalSegment(segment) {
    let out = '';
    for (let i = 0; i < segment.length; i++) {
        const ch = segment[i];
        if (ch !== '%') {
            out += ch;
            continue;
        }
        const hex = segment.slice(i + 1, i + 3);
        if (!/^[0-9A-Fa-f]{2}$/.test(hex))
            return { ok: false, reason: 'malformed percent-encoding' };
        const code = parseInt(hex, 16);
        const decoded = String.fromCharCode(code);
        if (code < 0x20 || code === 0x7f)
            return { ok: false, reason: 'encoded control character' };
        if (decoded === '/' || decoded === '\\')
            return { ok: false, reason: 'encoded slash or backslash' };
        if (decoded === '%')
            return { ok: false, reason: 'encoded percent sign (double encoding)' };
        out += UNRESERVED.test(decoded) ? decoded : `%${hex.toUpperCase()}`;
        i += 2;
    }
    if (!PCHAR.test(out.replace(/%[0-9A-F]{2}/g, '')))
        return { ok: false, reason: 'character not allowed in a path' };
    let text;
    try {
        text = decodeURIComponent(out);
    }
    catch {
        return { ok: false, reason: 'invalid UTF-8 in percent-encoding' };
    }
    // NFKC folds full-width and other compatibility forms ('．', '／', '＼') onto the ASCII ones a
    // downstream server might normalise them to.
    const folded = text.normalize('NFKC');
    if (text === '.' || text === '..' || folded === '.' || folded === '..')
        return { ok: false, reason: 'dot segment' };
    if (folded !== text && /[./\\]/.test(folded))
        return { ok: false, reason: 'look-alike dot or slash' };
    return out;
}
/** The last segment of the provider's token path, `{fiat base}/auth/generate-bearer-token` (SPEC §1). */
const TOKEN_SEGMENT = 'generate-bearer-token';
/**
 * True when the canonical path could name the provider's token endpoint on a server lenient about
 * what it matches: any case (Express routes are case-insensitive by default; Java's
 * `equalsIgnoreCase` even folds U+212A KELVIN SIGN to `k`), `;params` (RFC 3986 §3.3 path
 * parameters, which servlet containers strip), a suffix (`.json`: Spring suffix pattern matching;
 * trailing whitespace), a trailing slash, or extra segments around it. No payments API path has a
 * segment starting with `generate-bearer-token` for any other reason, so refusing them all is free.
 */
const PLAIN_ASCII = /^[\x21-\x24\x26-\x7e]*$/;
export function isTokenEndpointPath(path) {
    // Printable ASCII without escapes: decoding and NFKC are the identity, case folding is toLowerCase.
    if (PLAIN_ASCII.test(path))
        return path.toLowerCase().includes(`/${TOKEN_SEGMENT}`);
    return path.split('/').some((segment) => {
        let text;
        try {
            text = decodeURIComponent(segment);
        }
        catch {
            // Not a canonical path: refuse rather than guess what the provider would make of it.
            return true;
        }
        // Upper then lower case folds `ı`/`ſ`/`K` the way case-insensitive matchers do; NFKC folds
        // full-width and other compatibility forms.
        return text.normalize('NFKC').toUpperCase().toLowerCase().startsWith(TOKEN_SEGMENT);
    });
}
//# sourceMappingURL=canonical-path.js.map