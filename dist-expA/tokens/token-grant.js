/** Why a token request failed; a closed list so logs and metrics stay low-cardinality. */
export const TOKEN_FAILURE_REASONS = [
    'timeout', 'network', 'redirect', 'rejected', 'http_status', 'too_large', 'not_json',
    'success_false', 'bad_token', 'bad_expires_at', 'expires_at_in_milliseconds', 'expired',
];
export class TokenRequestError extends Error {
    reason;
    /** Safe facts about the response (status, content type, length), never its body. */
    details;
    constructor(reason, message, details = {}, cause) {
        super(message, { cause });
        this.name = 'TokenRequestError';
        this.reason = reason;
        this.details = details;
    }
}
//# sourceMappingURL=token-grant.js.map