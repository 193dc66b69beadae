export async function metricsRoute(app, options) {
    app.get('/metrics', async (_request, reply) => {
        reply.header('content-type', options.registry.contentType);
        return options.registry.metrics();
    });
}
//# sourceMappingURL=metrics-route.js.map