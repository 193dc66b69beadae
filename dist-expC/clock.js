/**
 * The one seam for time. Token deadlines are kept on the monotonic clock (immune to wall-clock
 * jumps); the wall clock is only used to read the provider's `expiresAt` and `Date` header.
 * Tests that are about time pass a fake; everything else gets `systemClock`.
 */
/** setTimeout fires at once for delays above 2^31-1 ms, so every scheduled delay is clamped to it. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
export const systemClock = {
    wallMs: () => Date.now(),
    monotonicMs: () => performance.now(),
    setTimeout(fn, ms) {
        const handle = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
        handle.unref();
        return handle;
    },
    clearTimeout(handle) {
        clearTimeout(handle);
    },
};
//# sourceMappingURL=clock.js.map