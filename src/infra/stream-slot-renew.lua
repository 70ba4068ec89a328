-- Renews the leases of the stream slots an instance holds (src/infra/stream-slots.ts).
-- KEYS: users' sorted sets of open streams. ARGV[1]: the lease in milliseconds, then one member per key.
-- A lease that is gone (expired, or given back) is not made again (ZADD XX). Returns the number of keys.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, 'XX', now + lease, ARGV[i + 1])
  redis.call('PEXPIRE', key, lease)
end
return #KEYS
