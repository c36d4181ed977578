-- wrk script of bench/daemon.sh: the same script drives the ceiling and the
-- daemon, so that both pay the same cost on wrk's side. It is told what to
-- send through the environment:
--
--   BENCH_PATHS  a file with one request path per line; every request picks
--                one of them at random (one line: always the same path)
--   BENCH_BODY   optional: a file whose bytes are POSTed as JSON; without
--                it the requests are GETs
--   BENCH_KEY    optional: the x-api-key header
--
-- Run it as: BENCH_PATHS=paths.txt wrk -t2 -c50 -d10s --latency -s bench/request.lua http://127.0.0.1:PORT

local paths = {}
local paths_file = os.getenv("BENCH_PATHS")
assert(paths_file and paths_file ~= "", "BENCH_PATHS is not set")
for line in io.lines(paths_file) do
  if line ~= "" then
    paths[#paths + 1] = line
  end
end
assert(#paths > 0, "BENCH_PATHS lists no path")

local method, body = "GET", nil
local headers = {}
local body_file = os.getenv("BENCH_BODY")
if body_file and body_file ~= "" then
  local f = assert(io.open(body_file, "rb"))
  body = f:read("*a")
  f:close()
  method = "POST"
  headers["Content-Type"] = "application/json"
end
local key = os.getenv("BENCH_KEY")
if key and key ~= "" then
  headers["x-api-key"] = key
end

math.randomseed(os.time())

-- Each wrk thread has its own Lua state; give each its own random sequence.
function setup(thread)
  thread:set("seed", math.random(1, 1000000))
end

-- Every request is formatted once, in init (wrk sets the Host header only
-- then), so that picking one costs wrk almost nothing.
local requests = {}

function init(args)
  math.randomseed(seed or os.time())
  for i, path in ipairs(paths) do
    requests[i] = wrk.format(method, path, headers, body)
  end
end

function request()
  return requests[math.random(#requests)]
end
