#!/usr/bin/env bash
# Container test (`npm run test:container`): builds the image and runs it for real.
#
#   1. docker build (the production image and the `demo` target); the production image has no
#      dist/fake-provider or demo; the image runs as a non-root numeric USER, has a HEALTHCHECK, exposes 8080,
#      bounds V8's young generation (NODE_OPTIONS) and glibc's malloc arenas and mmap threshold (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_)
#   2. `docker run IMAGE check` fails clearly without configuration
#   3. on a private docker network: the fake provider (the demo target's image) and the proxy,
#      configured as an operator would (a secret as *_FILE, the port published on 127.0.0.1 only,
#      PROXY_ALLOWED_CLIENTS = loopback + the network's gateway, which is where host traffic through
#      the published port comes from); `docker run IMAGE check` succeeds against the fake
#   4. from the host through 127.0.0.1:<published>: /healthz, /readyz, proxied requests to each
#      route family; a foreign Host and another container on the network are refused
#   5. inside: `id -u` is not 0; Docker's HEALTHCHECK turns healthy; logs hold no key
#   6. docker stop while a request is in flight: the request completes, exit code 0, within the grace;
#      the webhook inbox stores an event on its volume (better-sqlite3 under the image's Node) and
#      `webhooks list` finds it from another container
#   7. docker-compose --profile demo up: the example app, in the sidecar's network namespace, calls
#      http://localhost:8080/fiat/...; the host reaches the published port; docker-compose stop
#      leaves exit code 0; then down
# Everything is torn down on exit. Traffic stays on this machine: loopback and docker networks.
# The only outside traffic is `npm ci` inside `docker build`, which needs the npm registry.
#
# Needs: docker (DOCKER_HOST or the default socket), docker-compose v1 (1.28+) or `docker compose`,
# curl, node. Environment knobs: TEST_IMAGE (default payments-auth-proxy:test), TEST_DEMO_IMAGE
# (default payments-auth-proxy-demo:test), COMPOSE (the compose
# command), KEEP_IMAGE=0 to remove the test image afterwards.
set -euo pipefail
umask 022
cd "$(dirname "${BASH_SOURCE[0]}")/.."

IMAGE=${TEST_IMAGE:-payments-auth-proxy:test}
DEMO_IMAGE=${TEST_DEMO_IMAGE:-payments-auth-proxy-demo:test}
RUN_ID="pap$$"
NET="$RUN_ID-net"
FAKE="$RUN_ID-fake"
PROXY="$RUN_ID-proxy"
PROJECT="${RUN_ID}demo"
GRACE_S=5
WORK=$(mktemp -d)
STARTED_AT=$(date +%s)
FAILED=0
STEP=""

say() { printf '%s\n' "$*"; }
begin() { STEP="$*"; say "---- $STEP"; }
pass() { say "PASS  ${1:-$STEP}"; }
fail() {
  say "FAIL  ${STEP}: $*"
  FAILED=1
  diagnostics
  exit 1
}
diagnostics() {
  for c in "$PROXY" "$FAKE"; do
    if docker inspect "$c" >/dev/null 2>&1; then
      say "== docker logs $c (last 40 lines)"
      docker logs --tail 40 "$c" 2>&1 | sed 's/^/   /' || true
    fi
  done
  if [ -n "${COMPOSE_READY:-}" ]; then
    say "== $COMPOSE_NAME logs (last 60 lines)"
    compose logs --no-color --tail 60 2>&1 | sed 's/^/   /' || true
  fi
}

cleanup() {
  local rc=$?
  set +e
  if [ -n "${COMPOSE_READY:-}" ]; then compose down --volumes --remove-orphans --timeout 20 >/dev/null 2>&1; fi
  docker rm -f "$PROXY" "$FAKE" "$RUN_ID-probe" "$RUN_ID-inbox" >/dev/null 2>&1
  docker volume rm "$RUN_ID-webhooks" >/dev/null 2>&1
  docker network rm "$NET" >/dev/null 2>&1
  if [ "${KEEP_IMAGE:-1}" = 0 ]; then docker rmi "$IMAGE" "$DEMO_IMAGE" >/dev/null 2>&1; fi
  rm -rf "$WORK"
  local took=$(( $(date +%s) - STARTED_AT ))
  if [ "$rc" -eq 0 ] && [ "$FAILED" -eq 0 ]; then
    say "==== container test: all steps PASS (${took}s)"
  else
    say "==== container test: FAILED (${took}s)"
    [ "$rc" -eq 0 ] && rc=1
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- helpers --------------------------------------------------------------------------------------

# http METHOD URL [curl args...]: sets STATUS, BODY (file $WORK/body) and HEADERS (file $WORK/headers).
# --noproxy: a proxy from the environment must never see these loopback requests.
http() {
  local method=$1 url=$2
  shift 2
  STATUS=$(curl -sS --noproxy '*' --max-time 15 -X "$method" -D "$WORK/headers" -o "$WORK/body" -w '%{http_code}' "$@" "$url" 2>"$WORK/curl.err") || STATUS="000 ($(cat "$WORK/curl.err"))"
  BODY=$(cat "$WORK/body" 2>/dev/null || true)
}

# json_check 'JS boolean expression over j' < json : exit 0 when true (node is there: npm runs us).
json_check() {
  node -e '
    let s = ""; process.stdin.on("data", (d) => { s += d }).on("end", () => {
      let j; try { j = JSON.parse(s) } catch { process.exit(2) }
      process.exit(Function("j", "return (" + process.argv[1] + ")")(j) ? 0 : 1)
    })' "$1"
}

# wait_for SECONDS COMMAND...: retries COMMAND every 0.5 s until it succeeds.
wait_for() {
  local deadline=$(( $(date +%s) + $1 ))
  shift
  until "$@"; do
    [ "$(date +%s)" -ge "$deadline" ] && return 1
    sleep 0.5
  done
}

free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })'
}

# A /24 prefix (three octets) that overlaps none of the docker networks, for the compose file.
free_subnet_prefix() {
  local used
  used=$(docker network ls -q | xargs docker network inspect -f '{{range .IPAM.Config}}{{.Subnet}} {{end}}' 2>/dev/null | tr ' ' '\n' | grep -F . || true)
  # shellcheck disable=SC2016  # JavaScript, not shell
  USED="$used" node -e '
    const toInt = (ip) => ip.split(".").reduce((a, o) => a * 256 + Number(o), 0)
    const used = (process.env.USED || "").split("\n").filter(Boolean).map((c) => {
      const [ip, bits] = c.split("/"); const size = 2 ** (32 - Number(bits)); const start = toInt(ip) - (toInt(ip) % size)
      return [start, start + size - 1]
    })
    for (let third = 80; third < 256; third++) {
      const start = toInt(`172.30.${third}.0`), end = start + 255
      if (!used.some(([s, e]) => start <= e && s <= end)) { console.log(`172.30.${third}`); process.exit(0) }
    }
    process.exit(1)'
}

# Compose v1 warns on every command that the live profile's ./secrets/* files do not exist, even when
# that profile is not selected; those lines are noise here and are dropped (stdout untouched).
compose() {
  { $COMPOSE_CMD -p "$PROJECT" "$@" 2>&1 1>&3 3>&- | { grep -v 'uses an undefined secret file' || true; } >&2; } 3>&1
}

# --- 0. preflight -----------------------------------------------------------------------------------
begin "preflight: docker engine, compose, curl, node"
command -v docker >/dev/null || fail "docker CLI not found"
command -v curl >/dev/null || fail "curl not found"
command -v node >/dev/null || fail "node not found"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || fail "no Docker engine at ${DOCKER_HOST:-the default socket} (on CI: eval \"\$(../shared/tools/offline-docker.sh start)\")"
if [ -n "${COMPOSE:-}" ]; then COMPOSE_CMD=$COMPOSE
elif command -v docker-compose >/dev/null; then COMPOSE_CMD=docker-compose
elif docker compose version >/dev/null 2>&1; then COMPOSE_CMD="docker compose"
else fail "neither docker-compose nor 'docker compose' is available"; fi
COMPOSE_NAME=$COMPOSE_CMD
pass "preflight: engine $(docker version --format '{{.Server.Version}}'), $($COMPOSE_CMD version --short 2>/dev/null || echo "$COMPOSE_CMD")"

# --- 1. image -------------------------------------------------------------------------------------
begin "docker build -t $IMAGE ."
build_started=$(date +%s)
docker build -t "$IMAGE" . >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; fail "docker build failed"; }
docker build --target demo -t "$DEMO_IMAGE" . >>"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; fail "docker build --target demo failed"; }
pass "docker build, production and demo targets ($(( $(date +%s) - build_started ))s)"

begin "the production image is the bundle alone (and the native SQLite module): no other node_modules, no fake provider, no demo"
docker run --rm --entrypoint sh "$IMAGE" -c 'test -f dist/cli.mjs && test -f dist/cli.mjs.map && test "$(ls node_modules)" = "better-sqlite3" && test ! -e dist/fake-provider && test ! -e dist/demo.js && test -d dist/chunks && ! grep -rq "fake provider listening" dist' ||
  fail "$IMAGE holds more than the bundle and better-sqlite3 (other node_modules, the fake provider or the demo) or lacks it"
docker run --rm --entrypoint sh "$DEMO_IMAGE" -c 'test -f dist/fake-provider/cli.js' || fail "the demo image has no fake provider"
pass "dist/cli.mjs, its chunks and their maps only; the demo target has the fake provider"

begin "image metadata: non-root USER, HEALTHCHECK, EXPOSE 8080, exec-form ENTRYPOINT, NODE_OPTIONS, MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_"
user=$(docker image inspect -f '{{.Config.User}}' "$IMAGE")
case "${user%%:*}" in ""|0|root) fail "image USER is '${user}'";; esac
docker image inspect -f '{{json .Config.Healthcheck.Test}}' "$IMAGE" | grep -q healthz || fail "no HEALTHCHECK on /healthz"
docker image inspect -f '{{json .Config.ExposedPorts}}' "$IMAGE" | grep -q '"8080/tcp"' || fail "8080/tcp not exposed"
[ "$(docker image inspect -f '{{json .Config.Entrypoint}}' "$IMAGE")" = '["node","--heap-growing-percent=100","dist/cli.mjs"]' ] || fail "ENTRYPOINT is not [\"node\",\"--heap-growing-percent=100\",\"dist/cli.mjs\"]"
docker image inspect -f '{{json .Config.Env}}' "$IMAGE" | grep -q '"NODE_OPTIONS=--max-semi-space-size=8"' || fail "NODE_OPTIONS does not bound the young generation"
docker image inspect -f '{{json .Config.Env}}' "$IMAGE" | grep -q '"MALLOC_ARENA_MAX=1"' || fail "MALLOC_ARENA_MAX=1 is not set"
docker image inspect -f '{{json .Config.Env}}' "$IMAGE" | grep -q '"MALLOC_MMAP_THRESHOLD_=131072"' || fail "MALLOC_MMAP_THRESHOLD_=131072 is not set"
pass "image metadata: USER $user, HEALTHCHECK /healthz, EXPOSE 8080, ENTRYPOINT node --heap-growing-percent=100 dist/cli.mjs, NODE_OPTIONS=--max-semi-space-size=8, MALLOC_ARENA_MAX=1, MALLOC_MMAP_THRESHOLD_=131072"

begin "docker run IMAGE check without configuration exits non-zero and names the variable"
if docker run --rm "$IMAGE" check >"$WORK/check.out" 2>&1; then fail "check succeeded without configuration"; fi
grep -q PAYMENTS_FIAT_BASE_URL "$WORK/check.out" || { cat "$WORK/check.out"; fail "the message does not name PAYMENTS_FIAT_BASE_URL"; }
pass

# --- 2. fake provider and proxy on a private network ----------------------------------------------
begin "fake provider container on network $NET"
docker network create "$NET" >/dev/null
subnet=$(docker network inspect -f '{{(index .IPAM.Config 0).Subnet}}' "$NET")
gateway=$(docker network inspect -f '{{(index .IPAM.Config 0).Gateway}}' "$NET")
[ -n "$gateway" ] || gateway="${subnet%.*/*}.1"  # docker leaves Gateway empty on some engines: .1 is its choice
docker run -d --name "$FAKE" --network "$NET" --network-alias fake-provider \
  --read-only --cap-drop ALL --security-opt no-new-privileges:true \
  -e FAKE_PROVIDER_HOST=0.0.0.0 -e FAKE_PROVIDER_ADVERTISED_HOST=fake-provider \
  --entrypoint node "$DEMO_IMAGE" dist/fake-provider/cli.js >/dev/null
wait_for 20 sh -c "docker logs '$FAKE' 2>&1 | grep -q 'fake provider listening'" || fail "fake provider did not start"
pass "fake provider container (network $subnet, gateway $gateway)"

PROXY_ENV=(
  -e PAYMENTS_FIAT_BASE_URL=http://fake-provider:4010/api/b2b
  -e PAYMENTS_CRYPTO_BASE_URL=http://fake-provider:4020/api
  -e PAYMENTS_SANDBOX_API_KEY_FILE=/run/secrets/sandbox_api_key
  -e PAYMENTS_SANDBOX_PUBLIC_KEY_FILE=/run/secrets/sandbox_public_key
  -e PAYMENTS_PRODUCTION_API_KEY=HC_demo_production_api_key_0001
  -e PAYMENTS_PRODUCTION_PUBLIC_KEY=pk_demo_production_0001
  -e PROXY_DEFAULT_ENVIRONMENT=sandbox
  -e PROXY_EGRESS_IP_URL=http://fake-provider:4030/ip
  -e "PROXY_ALLOWED_CLIENTS=127.0.0.0/8,::1/128,$gateway/32"
  -e "PROXY_SHUTDOWN_GRACE_SECONDS=$GRACE_S"
)
mkdir "$WORK/secrets"
printf 'HC_demo_sandbox_api_key_0001\n' >"$WORK/secrets/sandbox_api_key"
printf 'pk_demo_sandbox_0001\n' >"$WORK/secrets/sandbox_public_key"
SECRETS=(HC_demo_sandbox_api_key_0001 pk_demo_sandbox_0001 HC_demo_production_api_key_0001 pk_demo_production_0001)

begin "proxy container: secrets as *_FILE, port published on 127.0.0.1 only"
# Created, given its secret files with `docker cp` (works with a remote engine too), then started.
# --health-interval only shortens the wait: the check itself is the image's HEALTHCHECK.
docker create --name "$PROXY" --network "$NET" -p 127.0.0.1::8080 --cap-drop ALL \
  --security-opt no-new-privileges:true --health-interval 2s --health-start-period 10s \
  "${PROXY_ENV[@]}" "$IMAGE" >/dev/null
docker cp "$WORK/secrets" "$PROXY:/run/secrets"
docker start "$PROXY" >/dev/null
published=$(docker port "$PROXY" 8080/tcp | head -n1)
case "$published" in 127.0.0.1:*) ;; *) fail "port published as '$published', not on 127.0.0.1";; esac
[ "$(docker port "$PROXY" | wc -l)" -eq 1 ] || fail "more than one published binding: $(docker port "$PROXY" | tr '\n' ' ')"
BASE="http://$published"
pass "proxy container started, published at $BASE"

# --- 3. from outside the container ------------------------------------------------------------------
begin "GET $BASE/healthz"
healthz_ok() { http GET "$BASE/healthz"; [ "$STATUS" = 200 ]; }
wait_for 30 healthz_ok || fail "status $STATUS, body $BODY"
json_check 'j.status === "ok"' <<<"$BODY" || fail "body $BODY"
pass "GET /healthz -> 200 $BODY"

begin "GET $BASE/readyz"
readyz_ok() { http GET "$BASE/readyz"; [ "$STATUS" = 200 ]; }
wait_for 30 readyz_ok || fail "status $STATUS, body $BODY"
json_check 'j.ready === true && j.environments.sandbox.ready === true && j.environments.production.ready === true && Number.isInteger(j.environments.sandbox.expiresAt) && j.egressIp === "203.0.113.7"' <<<"$BODY" || fail "body $BODY"
if grep -q 'eyJ' <<<"$BODY"; then fail "/readyz shows a token"; fi
pass "GET /readyz -> 200 $BODY"

check_echo() { # PATH ENVIRONMENT INTERFACE UPSTREAM_PATH
  http GET "$BASE$1" -H 'accept: application/json'
  [ "$STATUS" = 200 ] || fail "GET $1 -> $STATUS $BODY"
  json_check "j.success === true && j.environment === '$2' && j.interface === '$3' && j.path === '$4'" <<<"$BODY" || fail "GET $1 -> unexpected body $BODY"
  pass "GET $1 -> 200 from the fake $3 $2 upstream at $4"
}
begin "proxied requests from the host"
check_echo '/sandbox/fiat/v1/ping?probe=1' sandbox fiat /v1/ping
check_echo '/fiat/v1/ping' sandbox fiat /v1/ping
check_echo '/production/crypto/v1/ping' production crypto /v1/ping

begin "a foreign Host header is refused (DNS rebinding guard)"
http GET "$BASE/sandbox/fiat/v1/ping" -H 'Host: payments.attacker.example'
[ "$STATUS" = 403 ] && grep -qi '^x-proxy-error: CLIENT_NOT_ALLOWED' "$WORK/headers" || fail "status $STATUS, body $BODY"
pass "Host: payments.attacker.example -> 403 CLIENT_NOT_ALLOWED"

begin "another container on the network is refused (only loopback and the gateway are allowed)"
proxy_ip=$(docker inspect -f "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$PROXY")
probe=$(docker run --rm --name "$RUN_ID-probe" --network "$NET" --entrypoint node "$IMAGE" -e "
  fetch('http://$proxy_ip:8080/sandbox/fiat/v1/ping', { headers: { host: 'localhost' } })
    .then((r) => console.log(r.status, r.headers.get('x-proxy-error')), (e) => console.log('error', e.cause?.code ?? e.message))")
[ "$probe" = "403 CLIENT_NOT_ALLOWED" ] || fail "from $proxy_ip's neighbour: $probe"
pass "container on $NET -> $probe"

begin "docker run IMAGE check against the fake provider"
docker run --rm --network "$NET" "${PROXY_ENV[@]}" -e PAYMENTS_SANDBOX_API_KEY_FILE= -e PAYMENTS_SANDBOX_PUBLIC_KEY_FILE= \
  -e PAYMENTS_SANDBOX_API_KEY=HC_demo_sandbox_api_key_0001 -e PAYMENTS_SANDBOX_PUBLIC_KEY=pk_demo_sandbox_0001 \
  "$IMAGE" check >"$WORK/check.out" 2>&1 || { cat "$WORK/check.out"; fail "check exited non-zero"; }
for s in "${SECRETS[@]}"; do if grep -qF "$s" "$WORK/check.out"; then fail "check output shows a key"; fi; done
if grep -q 'eyJ' "$WORK/check.out"; then fail "check output shows a token"; fi
pass "check exits 0"

# --- 4. inside the container ---------------------------------------------------------------------
begin "the proxy process runs as non-root"
uid=$(docker exec "$PROXY" id -u)
[ -n "$uid" ] && [ "$uid" != 0 ] || fail "id -u = '$uid'"
pid1=$(docker exec "$PROXY" cat /proc/1/cmdline | tr '\0' ' ')
pass "id -u = $uid; PID 1 is: $pid1"

begin "Docker HEALTHCHECK reports healthy"
healthy() { [ "$(docker inspect -f '{{.State.Health.Status}}' "$PROXY")" = healthy ]; }
wait_for 40 healthy || fail "health status $(docker inspect -f '{{json .State.Health}}' "$PROXY")"
pass

begin "logs: egress IP reported, no key or token"
docker logs "$PROXY" >"$WORK/proxy.log" 2>&1
grep -q 'egress IP for allowlisting' "$WORK/proxy.log" || fail "no 'egress IP for allowlisting' line"
for s in "${SECRETS[@]}"; do if grep -qF "$s" "$WORK/proxy.log"; then fail "a key appears in the log"; fi; done
if grep -q 'eyJ' "$WORK/proxy.log"; then fail "a token appears in the log"; fi
pass

# --- 5. docker stop drains and exits 0 --------------------------------------------------------------
begin "docker stop with a request in flight: it completes, exit 0, within PROXY_SHUTDOWN_GRACE_SECONDS=$GRACE_S"
# The request body trickles in for 2 s, so the request is in flight when SIGTERM arrives.
( (sleep 2; printf '{"externalReference":"drain-1"}') |
  curl -sS --noproxy '*' --max-time 20 -T - -X PUT -H 'content-type: application/json' -H 'Expect:' \
    -o "$WORK/inflight.body" -w '%{http_code}' "$BASE/sandbox/fiat/v1/inflight" >"$WORK/inflight.status" 2>"$WORK/inflight.err" ) &
inflight=$!
sleep 0.7
stop_started=$(date +%s%N)
docker stop -t 30 "$PROXY" >/dev/null
stop_ms=$(( ($(date +%s%N) - stop_started) / 1000000 ))
wait "$inflight" || true
exit_code=$(docker inspect -f '{{.State.ExitCode}}' "$PROXY")
[ "$exit_code" = 0 ] || fail "exit code $exit_code after ${stop_ms} ms"
[ "$stop_ms" -lt $(( (GRACE_S + 2) * 1000 )) ] || fail "docker stop took ${stop_ms} ms (grace ${GRACE_S}s): SIGTERM not handled?"
[ "$(cat "$WORK/inflight.status")" = 200 ] || fail "in-flight request got '$(cat "$WORK/inflight.status")' $(cat "$WORK/inflight.err" "$WORK/inflight.body" 2>/dev/null)"
json_check 'j.success === true && j.method === "PUT"' <"$WORK/inflight.body" || fail "in-flight body $(cat "$WORK/inflight.body")"
pass "in-flight PUT -> 200; exit code 0 after ${stop_ms} ms"

begin "webhook inbox: better-sqlite3 13 under the image's Node, an event stored on the volume, listed by the command"
WH_TOKEN=wht_containerTestToken_00001
WH_ENV=(
  -e PAYMENTS_FIAT_BASE_URL=http://fake-provider:4010/api/b2b
  -e PAYMENTS_PRODUCTION_API_KEY=HC_demo_production_api_key_0001
  -e PAYMENTS_PRODUCTION_PUBLIC_KEY=pk_demo_production_0001
  -e PROXY_EGRESS_IP_URL=off
  -e PROXY_WEBHOOK_LISTEN=0.0.0.0:8443
  -e "PROXY_WEBHOOK_PATH_TOKEN=$WH_TOKEN"
  -e PROXY_WEBHOOK_SIGNING_SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
  -e PROXY_WEBHOOK_DELIVER_TO=http://127.0.0.1:9/payments/events
)
docker volume create "$RUN_ID-webhooks" >/dev/null
docker run -d --name "$RUN_ID-inbox" --network "$NET" -p 127.0.0.1::8443 --read-only --cap-drop ALL \
  -v "$RUN_ID-webhooks:/var/lib/payments-auth-proxy" "${WH_ENV[@]}" "$IMAGE" >/dev/null
wait_for 20 sh -c "docker logs '$RUN_ID-inbox' 2>&1 | grep -q 'webhook inbox ready'" || fail "the inbox did not start: $(docker logs --tail 20 "$RUN_ID-inbox" 2>&1)"
inbox_url="http://$(docker port "$RUN_ID-inbox" 8443/tcp | head -n1)"
answer=$(curl -sS --noproxy '*' --max-time 10 -X POST -H 'content-type: application/json' -d '{"id":"evt_container"}' "$inbox_url/webhooks/$WH_TOKEN")
case "$answer" in *'"received":true'*) ;; *) fail "intake answered '$answer'";; esac
event_id=$(printf '%s' "$answer" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).id))')
docker rm -f "$RUN_ID-inbox" >/dev/null
docker run --rm --read-only -v "$RUN_ID-webhooks:/var/lib/payments-auth-proxy" "${WH_ENV[@]}" "$IMAGE" webhooks list --json >"$WORK/webhooks.list" 2>&1 ||
  fail "webhooks list failed: $(cat "$WORK/webhooks.list")"
grep -q "\"id\":\"$event_id\"" "$WORK/webhooks.list" || fail "the stored event is not listed: $(cat "$WORK/webhooks.list")"
docker volume rm "$RUN_ID-webhooks" >/dev/null
pass "event $event_id answered 200, stored on the volume, listed after the container was removed"
docker rm -f "$PROXY" "$FAKE" >/dev/null
docker network rm "$NET" >/dev/null

# --- 6. docker-compose --profile demo ---------------------------------------------------------------
SIDECAR_PORT=$(free_port)
SIDECAR_SUBNET_PREFIX=$(free_subnet_prefix) || fail "no free 172.30.x.0/24 for the compose network"
export SIDECAR_IMAGE="$IMAGE" SIDECAR_DEMO_IMAGE="$DEMO_IMAGE" SIDECAR_PORT SIDECAR_SUBNET_PREFIX
begin "$COMPOSE_CMD --profile demo up -d --build (project $PROJECT, 127.0.0.1:$SIDECAR_PORT, $SIDECAR_SUBNET_PREFIX.0/24)"
COMPOSE_READY=1
compose --profile demo up -d --build >"$WORK/compose-up.log" 2>&1 || { cat "$WORK/compose-up.log"; fail "compose up failed"; }
for svc in fake-provider payments-auth-proxy-demo example-app-demo; do
  [ -n "$(compose ps -q "$svc")" ] || fail "service $svc has no container"
done
[ -z "$(compose ps -q payments-auth-proxy)" ] || fail "the live sidecar started under --profile demo"
compose --profile replicas config -q || fail "the replicas profile is not a valid compose file"
pass "compose up: fake-provider, payments-auth-proxy-demo, example-app-demo"

begin "the example app reaches the sidecar on localhost (shared network namespace)"
compose exec -T example-app-demo node app.mjs wait-ready >"$WORK/wait.out" 2>&1 || { cat "$WORK/wait.out"; fail "sidecar not ready seen from the app"; }
compose exec -T example-app-demo node -e '
  fetch("http://localhost:8080/fiat/v1/ping?from=app").then(async (r) => {
    const j = await r.json()
    console.log(r.status, j.environment, j.interface, j.path)
    process.exit(r.status === 200 && j.success === true ? 0 : 1)
  }, (e) => { console.log("error", e.cause?.code ?? e.message); process.exit(1) })' >"$WORK/app.out" 2>&1 || { cat "$WORK/app.out"; fail "call through the app's namespace failed"; }
pass "app -> http://localhost:8080/fiat/v1/ping: $(cat "$WORK/app.out")"

begin "the example app's own startup call succeeded"
app_called() { compose logs --no-color example-app-demo 2>/dev/null | grep 'called the provider through the sidecar' | grep -q '"status":200'; }
wait_for 30 app_called || fail "no successful call in the example app's log"
pass

begin "the host reaches the demo sidecar on 127.0.0.1:$SIDECAR_PORT only"
BASE="http://127.0.0.1:$SIDECAR_PORT"
check_echo '/fiat/v1/ping' sandbox fiat /v1/ping
check_echo '/production/fiat/v1/ping' production fiat /v1/ping
ports=$(docker port "$(compose ps -q payments-auth-proxy-demo)")
[ "$ports" = "8080/tcp -> 127.0.0.1:$SIDECAR_PORT" ] || fail "sidecar published as: $ports"
[ -z "$(docker port "$(compose ps -q fake-provider)")" ] || fail "the fake provider publishes ports"
pass "published: $ports; fake provider: none"

begin "the demo sidecar's HEALTHCHECK (image defaults) reports healthy"
demo_healthy() { [ "$(docker inspect -f '{{.State.Health.Status}}' "$(compose ps -q payments-auth-proxy-demo)")" = healthy ]; }
wait_for 60 demo_healthy || fail "health $(docker inspect -f '{{json .State.Health}}' "$(compose ps -q payments-auth-proxy-demo)")"
pass

begin "$COMPOSE_CMD stop: the sidecar exits 0"
sidecar_id=$(compose ps -q payments-auth-proxy-demo)
compose --profile demo stop >/dev/null 2>&1 || fail "compose stop failed"
code=$(docker inspect -f '{{.State.ExitCode}}' "$sidecar_id")
[ "$code" = 0 ] || fail "sidecar exit code $code"
pass "sidecar exit code 0"

begin "$COMPOSE_CMD down"
compose --profile demo down --volumes --remove-orphans >/dev/null 2>&1 || fail "compose down failed"
COMPOSE_READY=
pass
