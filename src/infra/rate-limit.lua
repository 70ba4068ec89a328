-- The rate limiter's check-and-count (src/infra/rate-limit.ts). One call checks a whole batch of
-- requests, in order. The batch comes as groups: consecutive checks of one key under the same limits (what one busy client sends within one event-loop turn)
-- form one group. KEYS: per group and limit, the sorted set and its counter. ARGV[1]: the number of
-- groups; then per group its member (unique to the group), its number of checks, its number of limits
-- and, per limit, the limit and the window in microseconds.
--
-- A group's checks are decided one after the other as if sent separately: the first `k` are allowed,
-- k being the smallest number of requests any limit still has room for (at most the group's size),
-- and the rest refused. Returns per group {k, hit, wait_us, then per limit the count before the group,
-- then per limit the microseconds until the oldest counted request leaves the window (-1: none)}, all
-- flattened into one array; `hit` and `wait_us` describe the group's refusals (0 when none).
--
-- Each key is trimmed, counted and its oldest member read once per batch, however many groups name
-- it; what the batch counts is added at the end (one member per group and key, scored with the batch's
-- instant, so after every member already stored), with one INCRBY and the expiries per key. A member
-- without a `#count` (or a counter lost while its set remained) is recounted from the set.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local counts, stored, oldest, adds, added, windows, counters, order = {}, {}, {}, {}, {}, {}, {}, {}
local function countOf(member)
  return tonumber(string.match(member, '#(%d+)$')) or 1
end
local function load(key, counter, window)
  if counts[key] ~= nil then return end
  local expired = redis.call('ZRANGEBYSCORE', key, '-inf', now - window)
  local n = tonumber(redis.call('GET', counter) or '-1')
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    if n >= 0 then
      for _, member in ipairs(expired) do n = n - countOf(member) end
    end
  end
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if not first[2] then
    n = 0
  elseif n < 0 then
    n = 0
    for _, member in ipairs(redis.call('ZRANGE', key, 0, -1)) do n = n + countOf(member) end
  end
  if #expired > 0 or n == 0 then redis.call('SET', counter, n, 'PX', math.ceil(window / 1000)) end
  counts[key], stored[key] = n, n
  oldest[key] = first[2] and tonumber(first[2]) or false
  adds[key], added[key], windows[key], counters[key] = {}, 0, window, counter
  order[#order + 1] = key
end
-- The score of the member holding the request at 0-based rank r from the oldest.
local function scoreAt(key, r)
  if r >= stored[key] then return now end
  local seen, from = 0, 0
  while true do
    local chunk = redis.call('ZRANGE', key, from, from + 99, 'WITHSCORES')
    if #chunk == 0 then return now end
    for i = 1, #chunk, 2 do
      seen = seen + countOf(chunk[i])
      if seen > r then return tonumber(chunk[i + 1]) end
    end
    from = from + 100
  end
end
local out = {}
local a, k = 2, 0
for _ = 1, tonumber(ARGV[1]) do
  local member = ARGV[a]
  local n = tonumber(ARGV[a + 1])
  local l = tonumber(ARGV[a + 2])
  a = a + 3
  local keys, limits, windowsOf = {}, {}, {}
  local allowed = n
  for i = 1, l do
    local key = KEYS[k + 2 * i - 1]
    keys[i], limits[i], windowsOf[i] = key, tonumber(ARGV[a]), tonumber(ARGV[a + 1])
    a = a + 2
    load(key, KEYS[k + 2 * i], windowsOf[i])
    local room = limits[i] - counts[key]
    if room < allowed then allowed = math.max(room, 0) end
  end
  k = k + 2 * l
  local before = {}
  for i = 1, l do
    local key = keys[i]
    before[i] = counts[key]
    before[l + i] = oldest[key] and (oldest[key] + windowsOf[i] - now) or -1
    if allowed > 0 then
      local list = adds[key]
      list[#list + 1] = member .. '#' .. allowed
      counts[key] = counts[key] + allowed
      added[key] = added[key] + allowed
      if not oldest[key] then oldest[key] = now end
    end
  end
  local hit, wait = 0, 0
  if allowed < n then
    for i = 1, l do
      local key = keys[i]
      if counts[key] >= limits[i] then
        local w = scoreAt(key, counts[key] - limits[i]) + windowsOf[i] - now
        if hit == 0 or w > wait then hit, wait = i, w end
      end
    end
  end
  out[#out + 1] = allowed
  out[#out + 1] = hit
  out[#out + 1] = wait
  for i = 1, 2 * l do out[#out + 1] = before[i] end
end
for _, key in ipairs(order) do
  local members = adds[key]
  if #members > 0 then
    local args = {}
    for _, m in ipairs(members) do
      args[#args + 1] = now
      args[#args + 1] = m
    end
    redis.call('ZADD', key, unpack(args))
    local ttl = math.ceil(windows[key] / 1000)
    redis.call('PEXPIRE', key, ttl)
    redis.call('SET', counters[key], counts[key], 'PX', ttl)
  end
end
return out
