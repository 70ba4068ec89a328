-- Takes one of a user's stream slots (src/infra/stream-slots.ts) when fewer than the limit are held.
-- KEYS[1]: the user's sorted set of open streams, scored by the instant (Redis time, ms) their lease runs out.
-- ARGV[1]: the stream's member; ARGV[2]: the limit; ARGV[3]: the lease in milliseconds.
-- Returns {taken (1 or 0), slots held afterwards}. Expired leases are dropped first.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[2]) then return {0, held} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return {1, held + 1}
