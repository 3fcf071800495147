-- switch: two coroutines alternate through the shared round-robin scheduler, 500,000
-- yields each.
local PER_FIBER = 500000

-- The scheduler comes from sched.lua, shared by the Lua peers.
local S = dofile((arg[0]:match("(.*/)") or "./") .. "sched.lua")
local go, run, pause = S.go, S.run, S.pause

local switches = 0
local function bouncer()
  for _ = 1, PER_FIBER do
    switches = switches + 1
    pause()
  end
end

go(bouncer)
go(bouncer)
run()
print(switches)
