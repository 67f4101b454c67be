-- report.lua: wrk done() hook for CS Benchmark.
--
-- Usage: wrk -t1 -c4 -d2s --latency -s lib/wrk/report.lua http://HOST:PORT/
--
-- After wrk's own text summary, prints exactly two lines to stdout:
--
--   CSB_WRK_JSON {"schema":1,"requests":...,"duration_us":...,...}
--   CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","values":[[v,count],...]}
--
-- The first is parsed by csbench/internal/parse.ParseWrkJSON, the second by
-- parse.ParseWrkDist: every latency value wrk recorded with its count, in
-- increasing order (wrk's latency(i) for i = 1..#latency, see wrk's
-- src/script.c), so that the distributions of several clients merge exactly
-- (internal/dist). Each latency(i) walks wrk's histogram from its minimum, so
-- the walk costs (distinct values) x (max - min) steps at worst; on a run
-- whose maximum is seconds that is a second or so, once, after the run. Units are in the
-- key names: every latency is in microseconds, as wrk records it. When wrk
-- recorded no latency sample (every request failed), the latency fields are
-- null, never 0: "not measured" must not read as "instant".
--
-- The hook defines done() only; it does not define request() or response(),
-- so wrk keeps its static, pre-built request and does not parse bodies.

local percentiles = {
  { "p50_us", 50 }, { "p75_us", 75 }, { "p90_us", 90 },
  { "p95_us", 95 }, { "p99_us", 99 }, { "p99_9_us", 99.9 },
}

-- int formats an integral count. %.0f, not %d: wrk hands counters to Lua as
-- doubles, and LuaJIT's %d is not defined for every double.
local function int(x)
  return string.format("%.0f", x)
end

-- real formats a non-integral value with enough digits to round-trip.
local function real(x)
  if x ~= x or x == math.huge or x == -math.huge then
    return "null"
  end
  return string.format("%.17g", x)
end

function done(summary, latency, requests)
  local e = summary.errors
  local f = {
    '"schema":1',
    '"requests":' .. int(summary.requests),
    '"duration_us":' .. int(summary.duration),
    '"bytes":' .. int(summary.bytes),
    '"errors":{"connect":' .. int(e.connect) ..
      ',"read":' .. int(e.read) ..
      ',"write":' .. int(e.write) ..
      ',"status":' .. int(e.status) ..
      ',"timeout":' .. int(e.timeout) .. '}',
  }
  local measured = #latency > 0
  local function lat(name, value)
    if measured then
      f[#f + 1] = '"' .. name .. '":' .. value()
    else
      f[#f + 1] = '"' .. name .. '":null'
    end
  end
  lat("latency_min_us", function() return int(latency.min) end)
  lat("latency_mean_us", function() return real(latency.mean) end)
  lat("latency_stdev_us", function() return real(latency.stdev) end)
  lat("latency_max_us", function() return int(latency.max) end)
  for _, p in ipairs(percentiles) do
    lat("latency_" .. p[1], function() return int(latency:percentile(p[2])) end)
  end
  io.write("CSB_WRK_JSON {" .. table.concat(f, ",") .. "}\n")
  local v = {}
  for i = 1, #latency do
    local value, count = latency(i)
    v[i] = "[" .. int(value) .. "," .. int(count) .. "]"
  end
  io.write('CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","values":[' ..
    table.concat(v, ",") .. "]}\n")
end
