-- wrk script for the benchmark suite: cycles through request bodies read from a file (one per line) and
-- prints a JSON summary. Arguments after `--`: <bodies file> <method> <pipelining depth>.
-- One Lua state per wrk thread: requests of all its connections take the next body in turn.
local bodies = {}
local method = "POST"
local depth = 1
local requests = {}
local index = 1

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then bodies[#bodies + 1] = line end
  end
  method = args[2] or "POST"
  depth = tonumber(args[3] or "1")
  for i = 1, #bodies do
    local r = {}
    for k = 0, depth - 1 do
      r[#r + 1] = wrk.format(method, nil, nil, bodies[((i - 1 + k) % #bodies) + 1])
    end
    requests[i] = table.concat(r)
  end
end

function request()
  local r = requests[index]
  index = index % #requests + 1
  return r
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"wrk":{"requests":%d,"duration_us":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%f}}}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
