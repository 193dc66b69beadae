# payments-auth-proxy container image.
#
#   docker build -t payments-auth-proxy:local .
#   docker run --rm -p 127.0.0.1:8080:8080 --env-file proxy.env \
#     -e PROXY_ALLOWED_CLIENTS=127.0.0.0/8,::1/128,172.17.0.1/32 payments-auth-proxy:local
#   (host traffic through a published port arrives from the bridge gateway, 172.17.0.1 by default)
#   docker run --rm --env-file proxy.env payments-auth-proxy:local check
#   docker build --target demo -t payments-auth-proxy-demo:local .   # + the fake provider, for the demo
#
# No BuildKit-only syntax (no `# syntax=` line, no RUN --mount, no COPY --chmod): the image must
# build with the classic builder too, which is what CI's offline Docker engine has.

# --- build: all dependencies, compile TypeScript, then drop the dev dependencies -------------------
FROM node:24-bookworm-slim AS build
WORKDIR /app
# Lockfile first, so the npm ci layer is reused until the dependencies change. No install script is
# needed (package.json allowScripts): better-sqlite3 13 ships prebuilt Node-API bindings and
# esbuild's JavaScript finds its platform package; --ignore-scripts says so to an npm of any version,
# so no compiler is needed either.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/bundle.mjs scripts/undici-dispatchers.cjs scripts/prom-client-metrics.cjs scripts/use-supported-node.sh ./scripts/
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# --- demo: the production image plus the fake provider (docker-compose --profile demo) -------------
# Its own target so the production image below never carries the fake provider or the demo; built
# only when asked for (`--target demo`), since the default target is the last stage.
FROM node:24-bookworm-slim AS demo
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER 1000:1000
CMD ["node", "dist/fake-provider/cli.js"]

# --- runtime: the bundled proxy only (dist-bundle/: cli.mjs, its chunks, their source maps), ---------
# and the one native module the bundle cannot hold (better-sqlite3 13, loaded only when a store is
# opened); no other node_modules, no fake provider, no demo
FROM node:24-bookworm-slim
# Node 24 sizes V8's young generation from the host's memory, not the container's share of it:
# 8 MB semi-spaces bound the peak under load, at no cost in CPU per request (docs/performance.md, Memory and Node options).
# npm start passes the same option (a test keeps the two equal). Setting NODE_OPTIONS at run time
# replaces this value.
# MALLOC_ARENA_MAX=1: glibc gives each thread that allocates (V8's GC and compiler helpers among
# them) its own malloc arena; one holds less at idle and under load, at the same CPU per request
# (docs/performance.md, Memory and Node options). npm start sets the same default.
# MALLOC_MMAP_THRESHOLD_=131072: glibc's own starting value, held fixed. glibc otherwise raises it
# after the first large free, and the 9 MB V8's optimising compiler allocates and frees once
# undici's HTTP parser is hot then stay resident (docs/performance.md, Memory and Node options). npm start sets it too.
# No NODE_COMPILE_CACHE: with the bundle, a cache warmed at build time did not shorten the start
# and held more memory (measured on Node 20: git log -p -- docs/performance-startup.md).
# Stack traces name the bundle's lines; for TypeScript file and line, run with
# NODE_OPTIONS="--max-semi-space-size=8 --enable-source-maps" (the map is next to the bundle).
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=8 \
    MALLOC_ARENA_MAX=1 \
    MALLOC_MMAP_THRESHOLD_=131072 \
    PROXY_HOST=0.0.0.0 \
    PROXY_PORT=8080 \
    PROXY_WEBHOOK_STORE_PATH=/var/lib/payments-auth-proxy/webhooks.db
WORKDIR /app
# Files stay owned by root and read-only to the service user: the process cannot modify its code.
# The bundle holds dist/cli.js and every module it imports, in cli.mjs and chunks/ (scripts/bundle.mjs);
# the fake provider and the demo are not among them (the bundle step fails if they are).
COPY --from=build /app/dist-bundle ./dist
# The SQLite driver (better-sqlite3 13, Node-API): its JavaScript and its prebuilt Linux bindings,
# nothing else of node_modules.
COPY --from=build /app/node_modules/better-sqlite3/package.json ./node_modules/better-sqlite3/package.json
COPY --from=build /app/node_modules/better-sqlite3/lib ./node_modules/better-sqlite3/lib
COPY --from=build /app/node_modules/better-sqlite3/prebuilds/linux-x64.node /app/node_modules/better-sqlite3/prebuilds/linux-arm64.node ./node_modules/better-sqlite3/prebuilds/
# The webhook inbox's store (SPEC §10): the one place the service user writes. Mount a volume here.
RUN mkdir -p /var/lib/payments-auth-proxy && chown 1000:1000 /var/lib/payments-auth-proxy
VOLUME ["/var/lib/payments-auth-proxy"]
# The official node images ship user `node` as 1000:1000. Numeric, so Kubernetes `runAsNonRoot`
# can verify it without a runAsUser.
USER 1000:1000
EXPOSE 8080
# Slim images have no curl: Node's fetch asks the process itself, on loopback, at the configured port.
# /healthz is "the process answers"; readiness (tokens held) is /readyz, for orchestrators that route.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PROXY_PORT||8080)+'/healthz',{signal:AbortSignal.timeout(2500)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is the process Docker signals (PID 1 unless run with --init). The CLI handles
# SIGTERM/SIGINT itself (drains in-flight requests for PROXY_SHUTDOWN_GRACE_SECONDS, exits 0), so
# `docker stop` must allow more than that grace: docker stop -t 15 / compose stop_grace_period.
# --heap-growing-percent=100: Node sizes V8's heap from the container's memory limit, and under a
# small limit (the 256Mi of deploy/kubernetes among them) V8 grows the old generation so little
# past its live size that it collects it almost continuously. Growing it to twice the live size
# keeps the limit's cap (docs/performance.md, Memory-limited containers). It is a V8 option Node
# refuses in NODE_OPTIONS, hence here; npm start passes it too.
ENTRYPOINT ["node", "--heap-growing-percent=100", "dist/cli.mjs"]
# `docker run IMAGE check` validates the configuration and fetches a token per environment.
CMD []
