-- wrk script of the benchmark: method, body and Authorization from the environment
-- (BENCH_METHOD, BENCH_BODY_FILE, BENCH_AUTH); prints one "BENCH_JSON {...}" line when done.
wrk.method = os.getenv("BENCH_METHOD") or "GET"
local body_file = os.getenv("BENCH_BODY_FILE")
if body_file and body_file ~= "" then
  local f = assert(io.open(body_file, "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.headers["Content-Type"] = "application/json"
end
local auth = os.getenv("BENCH_AUTH")
if auth and auth ~= "" then wrk.headers["Authorization"] = auth end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
