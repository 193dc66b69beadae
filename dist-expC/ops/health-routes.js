export async function healthRoutes(app, options) {
    app.get('/healthz', async () => ({ status: 'ok' }));
    app.get('/readyz', async (_request, reply) => {
        const environments = {};
        const rotations = options.rotation?.() ?? {};
        let ready = true;
        for (const [name, source] of options.sources) {
            const status = source.status();
            const rotation = rotations[name];
            environments[name] = rotation === undefined ? status : { ...status, rotation };
            ready &&= status.ready;
        }
        const body = { ready, environments, egressIp: options.egress.current() };
        const expected = options.egress.isExpected();
        if (expected !== null)
            body['egressIpExpected'] = expected;
        if (options.state !== undefined)
            body['state'] = { ready: options.state().ready };
        reply.code(ready ? 200 : 503).header('cache-control', 'no-store');
        return body;
    });
}
//# sourceMappingURL=health-routes.js.map