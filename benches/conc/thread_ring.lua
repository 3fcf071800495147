-- thread_ring (Benchmarks Game): 503 coroutines in a ring, a token passed 5,000,000 times.
-- The scheduler and rendezvous channels come from sched.lua, shared by the Lua peers.
local FIBERS = 503
local N = 5000000

local S = dofile((arg[0]:match("(.*/)") or "./") .. "sched.lua")
local go, run, chan, send, recv, close = S.go, S.run, S.chan, S.send, S.recv, S.close
local function worker(id, inbox, next, result)
  while true do
    local token = recv(inbox)
    if token == 0 then
      send(result, id)
      return
    end
    send(next, token - 1)
  end
end

go(function()
  local result = chan()
  local first = chan()
  local inbox = first
  for id = 1, FIBERS do
    local next = id < FIBERS and chan() or first
    go(worker, id, inbox, next, result)
    inbox = next
  end
  send(first, N)
  print(recv(result))
end)
run()
