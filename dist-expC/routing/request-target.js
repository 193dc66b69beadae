import { splitTarget } from './canonical-path.js';
/** The route a request matched, if it is a proxy route (the URL is already canonical: server.ts rewriteUrl). */
export function resolveTarget(request) {
    const route = request.routeOptions.config.route;
    if (route === undefined)
        return null;
    const [path, query] = splitTarget(request.url);
    return { route, path: path.slice(route.prefix.length), query };
}
//# sourceMappingURL=request-target.js.map