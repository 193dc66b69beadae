-- wrk script of the benchmark: method, body and Authorization from the environment
-- (BENCH_METHOD, BENCH_BODY_FILE, BENCH_AUTH); prints one "BENCH_JSON {...}" line when done.
--
-- With BENCH_RATE set (run with -t1), requests are paced at that many per second: every send
-- takes the next slot of one schedule kept for all connections (wrk asks `delay()` before each
-- request a connection sends), so 50 connections share an even 2,000 req/s instead of each
-- firing when its previous answer arrives. wrk times a request from its write to the last byte
-- of its answer. A connection takes its next slot when its answer is in, so at 50 connections and
-- 2,000 req/s that slot is about 25 ms ahead; an answer slower than that makes the next send late,
-- and that wait is not in the latency (the coordinated omission wrk2 corrects for). How late each
-- send was against its slot is reported as the schedule lag, and the sends over 1 ms late are
-- counted, so a stall that delays sends shows up.
wrk.method = os.getenv("BENCH_METHOD") or "GET"
local body_file = os.getenv("BENCH_BODY_FILE")
if body_file and body_file ~= "" then
  local f = assert(io.open(body_file, "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.headers["Content-Type"] = "application/json"
end
-- With BENCH_UNIQUE_IDS (a run id), every request's body gets "<run id>-<n>" for "[<id>]": a new
-- transaction each, never a replay of an earlier request or run.
local unique_run = os.getenv("BENCH_UNIQUE_IDS")
if unique_run and unique_run ~= "" and wrk.body then
  local template = wrk.body
  local sequence = 0
  function request()
    sequence = sequence + 1
    local body = template:gsub("%[<id>%]", unique_run .. "-" .. sequence)
    return wrk.format(nil, nil, nil, body)
  end
end

local auth = os.getenv("BENCH_AUTH")
if auth and auth ~= "" then wrk.headers["Authorization"] = auth end
-- BENCH_HEADERS: more header lines, "Name: value" each, separated by newlines (MCP's own).
local extra = os.getenv("BENCH_HEADERS")
if extra and extra ~= "" then
  for name, value in extra:gmatch("([^:\n]+):%s*([^\n]*)") do wrk.headers[name] = value end
end

local rate = tonumber(os.getenv("BENCH_RATE") or "")
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

if rate then
  local ffi = require("ffi")
  ffi.cdef[[
    typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
    int clock_gettime(int clk_id, bench_timespec *tp);
  ]]
  local CLOCK_MONOTONIC = 1
  local ts = ffi.new("bench_timespec")
  local function now_ms()
    ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
    return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
  end
  local interval_ms = 1000 / rate
  local next_slot = nil
  -- Read by done() through thread:get(); one entry per send.
  lags = {}

  -- wrk waits whole milliseconds: a send goes out in the millisecond of its slot or the next.
  function delay()
    local now = now_ms()
    if next_slot == nil then next_slot = now end
    local slot = next_slot
    next_slot = next_slot + interval_ms
    local wait = slot - now
    lags[#lags + 1] = wait < 0 and -wait or 0
    return wait > 0 and math.ceil(wait) or 0
  end
end

-- The latency's quantiles at every 0.1%: rounds are pooled from these (bench/lib/report.mjs).
local function quantiles(latency)
  local q = {}
  for i = 0, 1000 do q[#q + 1] = latency:percentile(i / 10) end
  return table.concat(q, ",")
end

local function percentile(sorted, p)
  if #sorted == 0 then return 0 end
  local i = math.ceil(p / 100 * #sorted)
  if i < 1 then i = 1 end
  return sorted[i]
end

function done(summary, latency, requests)
  local e = summary.errors
  local lag = {}
  for _, thread in ipairs(threads) do
    for _, v in ipairs(thread:get("lags") or {}) do lag[#lag + 1] = v end
  end
  table.sort(lag)
  local late = 0
  for _, v in ipairs(lag) do if v > 1 then late = late + 1 end end
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d,"mean":%.1f},"lag_ms":{"count":%d,"late":%d,"p50":%.3f,"p99":%.3f,"max":%.3f},"quantiles_us":[%s]}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean,
    #lag, late, percentile(lag, 50), percentile(lag, 99), lag[#lag] or 0, quantiles(latency)))
end
