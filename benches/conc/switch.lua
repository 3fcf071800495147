-- switch: two coroutines alternate through a minimal round-robin scheduler, 500,000
-- yields each.
local PER_FIBER = 500000

local create, resume, yield, running = coroutine.create, coroutine.resume, coroutine.yield, coroutine.running
local qco, qhead, qtail = {}, 1, 0
local function ready(co) qtail = qtail + 1; qco[qtail] = co end
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

local switches = 0
local function bouncer()
  for _ = 1, PER_FIBER do
    switches = switches + 1
    pause()
  end
end

ready(create(bouncer))
ready(create(bouncer))
run()
print(switches)
