export const DEFAULT_LINGER = { totalMs: 30_000, idleMs: 5_000 };
const lingering = new WeakSet();
/** Stops parsing `socket`, ends its write side once `answer` (if any) is written, and discards input until a bound. */
export function lingerAndClose(socket, bounds, answer) {
    if (lingering.has(socket))
        return;
    lingering.add(socket);
    // The HTTP parser's listeners go: nothing after the refused request is parsed (no smuggled second request).
    socket.removeAllListeners('data');
    socket.removeAllListeners('end');
    socket.removeAllListeners('timeout');
    socket.on('error', () => { socket.destroy(); });
    const destroy = () => { socket.destroy(); };
    const total = setTimeout(destroy, bounds.totalMs);
    total.unref();
    socket.setTimeout(bounds.idleMs, destroy);
    socket.once('close', () => { clearTimeout(total); });
    socket.on('end', destroy);
    socket.on('data', () => { });
    socket.resume();
    if (socket.destroyed)
        return;
    if (answer === undefined)
        socket.end();
    else
        socket.end(answer);
}
/**
 * For answers written through a response object (a 413 from a route): Node ends such a response
 * with `socket.destroySoon()`, which turns unread input into a reset; this socket lingers instead.
 */
export function lingerAfterResponse(socket, bounds) {
    socket.destroySoon = () => { lingerAndClose(socket, bounds); };
}
//# sourceMappingURL=lingering-close.js.map