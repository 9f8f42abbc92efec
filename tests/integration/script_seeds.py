"""The Lua scripts of the seed notes (issue 6), as users run them.

The notes are web pages, so their line breaks were lost in places
(comments run into the next statement) and the first one escapes its
quotes (`struct.unpack(\\'<i\\', v)`).  These are the scripts with the line
breaks and quotes put back; every statement, comment and name is the
note's own.  They must run unchanged on Cairn.
"""

# Seed 000: message-cache cleanup.  KEYS[1] is a sorted set whose member at
# rank 0 is a placeholder ("0", score 0); every other member is a message
# whose first 4 bytes are its little-endian Unix time.  KEYS[2] is the
# maximum number of messages kept and KEYS[3] the expiry time (numbers
# passed as keys, as the note's Erlang client does).  Returns {dels, ltime}.
CLEANUP = """local ltime = 0
local dels = 0
local lefts = 0
local list = redis.call("ZRANGE", KEYS[1], 1, -1)
if(list[1] == nil) then
    return {-1, 0}
end
for _,v in ipairs(list) do
    if lefts == 0 then
        ltime = struct.unpack('<i', v)
        if ltime < tonumber(KEYS[3]) then
            dels = dels + 1
        else
            lefts = lefts + 1
        end
    else
        lefts = lefts + 1
    end
end
if lefts > tonumber(KEYS[2]) then
    dels = dels + (lefts - tonumber(KEYS[2]))
    lefts = tonumber(KEYS[2])
end
if lefts == 0 then
    ltime = 0
    redis.call("DEL", KEYS[1])
elseif dels > 0 then
    redis.call("ZREMRANGEBYRANK", KEYS[1], 1, dels)
end
return {dels, ltime}
"""

# Seed 001, case 1: rate limiter (at most ARGV[1] calls per ARGV[2] seconds).
RATE_LIMITER = """--获取KEY
local k = KEYS[1]
--次数
local mt = tonumber(ARGV[1] or '3')
-- 过期时间,单位是 秒
local expire = tonumber(ARGV[2] or '60')
--加1操作
local ct = redis.call('incr', k)
-- 第一次才进行过期时间设置的操作
if ct == 1 then
    redis.call('expire', k, expire)
end
if ct > mt then
    return 0
else
    return 1
end
"""

# Seed 001, case 2: a set capped at ARGV[2] members (1 full, 0 already
# there, 2 added).
CAPPED_SET = """--获取KEY
local k = KEYS[1]
--获取ARGV内的参数并打印
local para = ARGV[1]
--限制值
local limit = tonumber(ARGV[2] or '5')
--获取长度
local len = tonumber(redis.call('scard', k))
-- 1 表示已经添加满了
if len >= limit then
    return 1
else
    -- 没有达到最大长度,那么添加元素
    local flag = redis.call('sadd', k, para)
    -- 重复添加返回的是 0
    if tonumber(flag) == 0 then
        return 0
    else
        -- 2 表示成功添加
        return 2
    end
end
"""

# Seed 001, case 3: delayed tasks.  KEYS[1] a sorted set of task ids scored
# by due time, KEYS[2] a hash of task id -> body.  Pops up to ARGV[2] tasks
# due by ARGV[1] and returns their bodies.
DELAYED_TASKS = """-- 传入的参数主要是当前时间戳 和 limit
-- 当前时间戳
local zSetKey = KEYS[1]
local hashKey = KEYS[2]
-- 当前的limit
local maxScore = ARGV[1]
local limit = ARGV[2]
-- body
local zList = redis.call('zrangebyscore', zSetKey, '0', maxScore, 'limit', '0', limit)
--命令代码
if zList ~= false and #zList ~= 0 then
    redis.call('zrem', zSetKey, unpack(zList))
    -- 移除 hash 表中的 key 的内容,方便移除定时任务
    local hashValues = redis.call('hmget', hashKey, unpack(zList))
    -- 找到了对应的值
    if hashValues ~= false and #hashValues ~= 0 then
        redis.call('hdel', hashKey, unpack(zList))
        return hashValues
    else
        return nil
    end
else
    return nil
end
"""

# The same with the note's two debugging aids: the command text saved in
# key 'cmd', and the result JSON-encoded into key 'result' and returned.
DELAYED_TASKS_DEBUG = """local zSetKey = KEYS[1]
local hashKey = KEYS[2]
local maxScore = ARGV[1]
local limit = ARGV[2]
-- 拼接命令并保存到 redis 中
local cmd = 'zrangebyscore ' .. zSetKey .. ' 0 ' .. maxScore .. ' limit ' .. '0 ' .. limit
redis.call('set', 'cmd', cmd)
local zList = redis.call('zrangebyscore', zSetKey, '0', maxScore, 'limit', '0', limit)
if zList ~= false and #zList ~= 0 then
    redis.call('zrem', zSetKey, unpack(zList))
    local hashValues = redis.call('hmget', hashKey, unpack(zList))
    if hashValues ~= false and #hashValues ~= 0 then
        redis.call('hdel', hashKey, unpack(zList))
        --  cjson.encode
        redis.call('set', 'result', cjson.encode(hashValues))
        return cjson.encode(hashValues)
    else
        return nil
    end
else
    return nil
end
"""

# Seed 004: a hash counter that never stays below zero (1 when it had to be
# put right, else 0).  Run through a client's script helper.
COUNTER = """
local v = redis.call("HINCRBY", KEYS[1], ARGV[1], ARGV[2])
if v < 0 then
    local c = tonumber(ARGV[2])
    if c < 0 then
        return redis.call("HSET", KEYS[1], ARGV[1], 0) and 1
    else
        return redis.call("HSET", KEYS[1], ARGV[1], 1) and 1
    end
else
    return 0
end
"""
