export const ANONYMOUS_CALLER_ID = 'anonymous';
export function callerIdOf(request) {
    return request.caller?.id ?? ANONYMOUS_CALLER_ID;
}
//# sourceMappingURL=caller.js.map