-- ping_pong: 500,000 round trips over two unbuffered channels between two coroutines.
-- The scheduler and rendezvous channels come from sched.lua, shared by the Lua peers.
local N = 500000

local S = dofile((arg[0]:match("(.*/)") or "./") .. "sched.lua")
local go, run, chan, send, recv, close = S.go, S.run, S.chan, S.send, S.recv, S.close

local function ponger(ping, pong)
  while true do
    local v = recv(ping)
    if v == nil then return end
    send(pong, v + 1)
  end
end

go(function()
  local ping, pong = chan(), chan()
  go(ponger, ping, pong)
  local n = 0
  for _ = 1, N do
    send(ping, n)
    n = recv(pong)
  end
  close(ping)
  print(n)
end)
run()
