-- SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
local now = ARGV[4] and tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', now))
local over = redis.call('ZRANGEBYSCORE', KEYS[2], string.format('%.0f', now), '+inf',
                        'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
return { now, redis.call('ZCARD', KEYS[1]), over }
