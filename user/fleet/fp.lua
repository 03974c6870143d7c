-- SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl, nrem = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
for i = 4, 3 + nrem do
  redis.call('ZREM', KEYS[1], ARGV[i])
end
for i = 4 + nrem, #ARGV do
  redis.call('ZADD', KEYS[1], string.format('%.0f', now + ttl), ARGV[i])
end
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. string.format('%.0f', now), '+inf',
                        'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
return { now, live }
