-- SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
local n = #KEYS - 1
local now = ARGV[2] and tonumber(ARGV[2])
local life = 1
if now then
  life = 3600
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local args = ARGV[1]
if n < 1 or #args < 64 * n then
  return redis.error_reply('weir: bad arguments')
end
local cur = redis.call('MGET', unpack(KEYS, 1, n))
local over, out, ex, p = KEYS[n + 1], {}, {}, 1
local kind, c, tol, la, from, tat, v, s, tot, ack, ep, hs
local idx, cp, cc, oc, op, thr, per, lim, hid, nh, si, sc, sp, sa, al, a, k, u, w, g
for i = 1, n do
  if p + 8 > #args + 1 then
    return redis.error_reply('weir: bad arguments')
  end
  kind, p = struct.unpack('<d', args, p)
  v = cur[i]
  if kind == 0 then
    tot, ack, ep, hid, tol, la, from, p = struct.unpack('<ddddddd', args, p)
    if from <= 0 or from > now then from = now end
    hs, k, c, tat = {}, nil, tot - ack, 0
    if v and #v >= 8 and (#v - 8) % 24 == 0 then
      tat = struct.unpack('<d', v)
      for q = 9, #v, 24 do
        hs[#hs + 1] = { struct.unpack('<ddd', v, q) }
        if hs[#hs][1] == hid then k = #hs end
      end
    elseif v then
      tat = tonumber(v) or 0
    end
    if k and hs[k][2] == ep then
      c = tot - hs[k][3]
      if c < 0 then c, tot = 0, hs[k][3] end
    end
    hs[k or #hs + 1] = { hid, ep, tot }
    if tat < from then tat = from end
    tat = tat + c
    s = math.ceil(math.max(tat - now, 0) / 1000000) + life
    if not ex[s] then ex[s] = tostring(s) end
    for q = 1, #hs do
      hs[q] = struct.pack('<ddd', hs[q][1], hs[q][2], hs[q][3])
    end
    redis.call('SET', KEYS[i], struct.pack('<d', tat) .. table.concat(hs), 'EX', ex[s])
    if tat < now + la then tat = now + la end
    if tat - now > tol then
      redis.call('ZADD', over, string.format('%.0f', tat), KEYS[i])
    end
    out[i] = struct.pack('<d', tat - now)
  else
    idx, cp, cc, oc, op, thr, per, lim, hid, nh, p =
      struct.unpack('<dddddddddd', args, p)
    if per < 1 or idx < 1 or nh < 1 then
      return redis.error_reply('weir: bad arguments')
    end
    si, sc, sp, sa, al = -1, 0, 0, 0, {}
    if v and #v >= 32 and (#v - 32) % 16 == 0 then
      si, sc, sp, sa = struct.unpack('<dddd', v)
      for q = 33, #v, 16 do
        al[#al + 1] = { struct.unpack('<dd', v, q) }
      end
    end
    if si < idx then
      if si == idx - 1 then sp = sc else sp = 0 end
      si, sc, sa, al = idx, 0, 0, {}
    end
    a = -1
    if si == idx then
      sc = sc + cc
      sp = sp + cp
      if sc < oc then sc = oc end
      if sp < op then sp = op end
      k = #al + 1
      for q = 1, #al do
        if al[q][1] == hid then k = q end
      end
      a = al[k] and al[k][2] or 0
      if a < oc then a = oc end
      sa = sa - (al[k] and al[k][2] or 0) + a
      u = sa
      if kind == 2 then
        w = 1 - (now - si * per) / per
        if w < 0 then w = 0 elseif w > 1 then w = 1 end
        u = u + sp * w
      end
      if u < lim then
        g = math.floor((lim - u) / nh)
        a = a + g
        sa = sa + g
      end
      al[k] = { hid, a }
    elseif si == idx + 1 then
      sp = sp + cc
    end
    s = math.ceil(math.max((si + 2) * per - now, 0) / 1000000) + life
    if not ex[s] then ex[s] = tostring(s) end
    for q = 1, #al do
      al[q] = struct.pack('<dd', al[q][1], al[q][2])
    end
    redis.call('SET', KEYS[i], struct.pack('<dddd', si, sc, sp, sa) .. table.concat(al),
               'EX', ex[s])
    if sc >= thr and (si + 1) * per > now then
      redis.call('ZADD', over, string.format('%.0f', (si + 1) * per), KEYS[i])
    end
    out[i] = struct.pack('<dddd', si, sc, sp, a)
  end
end
if p ~= #args + 1 then
  return redis.error_reply('weir: bad arguments')
end
return { now, table.concat(out) }
