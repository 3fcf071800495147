-- mutex_counter: 1000 coroutines × 1000 increments of a shared counter under a FIFO
-- mutex, yielding to the scheduler inside the critical section.
-- A minimal cooperative scheduler (FIFO run queue).
local FIBERS = 1000
local INCREMENTS = 1000

local create, resume, yield, running = coroutine.create, coroutine.resume, coroutine.yield, coroutine.running
local qco, qhead, qtail = {}, 1, 0
local function ready(co) qtail = qtail + 1; qco[qtail] = co end
local function go(f) ready(create(f)) end
local function run()
  while qhead <= qtail do
    local co = qco[qhead]
    qco[qhead] = nil
    qhead = qhead + 1
    local ok, err = resume(co)
    if not ok then error(debug.traceback(co, err), 0) end
  end
end
local function pause() ready(running()); yield() end
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
