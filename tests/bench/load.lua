-- Closed-loop load for `make bench`: each connection sends the next request of a list
-- as soon as the previous answer arrived. Script arguments: requests file, token, tag,
-- threads. Each thread starts its own share of the list, so that on a long list (ids read
-- once in a while) no thread asks for what another has just asked for.
-- Requests file lines: METHOD <TAB> PATH [<TAB> BODY]; `{{n}}` in a body becomes a
-- number unique to this run (POST item creates a new item each time). Answers with
-- status >= 400 count as errors (wrk's own count: no per-response Lua, it costs CPU), as
-- do connections broken or timed out; `status_errors` are the answers among `requests`
-- that were errors.
local counter = 0
local threads = {}

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  requests_list = {}
  for line in io.lines(args[1]) do
    local method, path, body = line:match("^(%u+)\t([^\t]+)\t?(.*)$")
    table.insert(requests_list, {method = method, path = path, body = body})
  end
  headers = {["Content-Type"] = "application/json"}
  if args[2] and args[2] ~= "" then headers["Authorization"] = "Bearer " .. args[2] end
  tag = (args[3] or "run") .. "-" .. tid
  position = (tid - 1) * math.floor(#requests_list / tonumber(args[4] or 1))
end

function request()
  local r = requests_list[(position % #requests_list) + 1]
  position = position + 1
  local body = nil
  if r.body ~= "" then
    counter = counter + 1
    body = r.body:gsub("{{n}}", tag .. "-" .. counter)
  end
  return wrk.format(r.method, r.path, headers, body)
end

function done(summary, latency, requests)
  io.write(string.format(
    'WRK_JSON {"requests": %d, "duration_us": %d, "p50_us": %d, "p95_us": %d, ' ..
    '"p99_us": %d, "mean_us": %.1f, "errors": %d, "status_errors": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95),
    latency:percentile(99), latency.mean,
    summary.errors.connect + summary.errors.read + summary.errors.write +
    summary.errors.status + summary.errors.timeout, summary.errors.status))
end
