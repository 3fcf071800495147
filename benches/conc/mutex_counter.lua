-- mutex_counter: 1000 coroutines × 1000 increments of a shared counter under a FIFO
-- mutex, yielding to the scheduler inside the critical section.
local FIBERS = 1000
local INCREMENTS = 1000

-- The scheduler comes from sched.lua, shared by the Lua peers.
local S = dofile((arg[0]:match("(.*/)") or "./") .. "sched.lua")
local go, run, ready, pause = S.go, S.run, S.ready, S.pause
local running, yield = coroutine.running, coroutine.yield
local function mutex() return { locked = false, wq = {}, wh = 1, wt = 0 } end
local function lock(m)
  if not m.locked then m.locked = true; return end
  local t = m.wt + 1; m.wt = t; m.wq[t] = running()
  yield() -- woken holding the lock
end
local function unlock(m) -- hand the lock straight to the first waiter (FIFO)
  local h = m.wh
  if h <= m.wt then
    local w = m.wq[h]; m.wq[h] = nil; m.wh = h + 1
    ready(w)
  else
    m.locked = false
  end
end

local counter = 0
local m = mutex()

local function worker()
  for _ = 1, INCREMENTS do
    lock(m)
    local v = counter
    pause()
    counter = v + 1
    unlock(m)
  end
end

local finished = 0
for _ = 1, FIBERS do
  go(function() worker(); finished = finished + 1 end)
end
run()
assert(finished == FIBERS)
print(counter)
