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
-- (internal/dist). wrk's own accessor, latency(i), scans its histogram from
-- the minimum on every call: walking all of it costs sum(value - min) steps,
-- tens of seconds at a few thousand connections (a long, sparse tail), after
-- the measurement but inside the cell's window. So the hook reads the
-- histogram once through LuaJIT's FFI (wrk 4's `stats` struct: count,
-- limit, min, max, data[]), max - min steps, and trusts that read only when
-- it agrees with wrk's accessors (min, max, #latency, and latency(i) at the
-- first, middle and last index); otherwise it walks latency(i) within
-- WALK_BUDGET steps, and past that prints "complete":false with no values:
-- a distribution that cannot be merged exactly, never a partial one. Units are in the
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

-- WALK_BUDGET bounds the steps wrk takes to hand over its distribution
-- (see above): 3e8, about a second on the 2-CPU build VM.
local WALK_BUDGET = 3e8

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

local function pair(value, count)
  return "[" .. int(value) .. "," .. int(count) .. "]"
end

-- histogram reads wrk's histogram in one pass through the FFI; nil when the
-- FFI is missing or the read disagrees with wrk's own accessors.
local function histogram(latency, n)
  local has_ffi, ffi = pcall(require, "ffi")
  if not has_ffi then
    return nil
  end
  local ok, v = pcall(function()
    -- The userdata holds a stats *; the struct is five uint64_t words
    -- before data[]: count, limit, min, max.
    local p = ffi.cast("uint64_t **", latency)[0]
    local lo, hi = tonumber(p[2]), tonumber(p[3])
    if lo ~= latency.min or hi ~= latency.max then
      return nil
    end
    local out, k = {}, 0
    local counts = {}
    for value = lo, hi do
      local c = tonumber(p[4 + value])
      if c ~= 0 then
        k = k + 1
        out[k] = pair(value, c)
        counts[k] = { value, c }
      end
    end
    if k ~= n then
      return nil
    end
    for _, i in ipairs({ 1, math.floor((n + 1) / 2), n }) do
      local value, c = latency(i)
      if value ~= counts[i][1] or c ~= counts[i][2] then
        return nil
      end
    end
    return out
  end)
  if ok then
    return v
  end
  return nil
end

-- walk is wrk's own accessor, latency(i) for i = 1..n, within WALK_BUDGET
-- steps; it returns the pairs and whether it got them all.
local function walk(latency, n)
  local v, lo, spent = {}, latency.min, 0
  for i = 1, n do
    local value, count = latency(i)
    v[i] = pair(value, count)
    spent = spent + (value - lo)
    if spent > WALK_BUDGET and i < n then
      return {}, false
    end
  end
  return v, true
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
  local n = #latency
  local v = {}
  if n > 0 then
    v = histogram(latency, n) -- nil when the FFI read cannot be trusted
  end
  local complete = true
  if not v then
    v, complete = walk(latency, n)
  end
  if complete then
    io.write('CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","values":[' ..
      table.concat(v, ",") .. "]}\n")
  else
    io.write('CSB_WRK_DIST {"schema":"csb.wrkdist/v1","unit":"us","complete":false,"distinct":' ..
      int(n) .. ',"values":[]}\n')
  end
end
