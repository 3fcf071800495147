-- skynet: a 10-ary tree of coroutines, 1,000,000 leaves; sums flow up rendezvous channels.
-- The scheduler and rendezvous channels come from sched.lua, shared by the Lua peers.
local SIZE = 1000000
local DIV = 10

local S = dofile((arg[0]:match("(.*/)") or "./") .. "sched.lua")
local go, run, chan, send, recv, close = S.go, S.run, S.chan, S.send, S.recv, S.close
local function skynet(out, num, size)
  if size == 1 then
    send(out, num)
    return
  end
  local rc = chan()
  local sub = size // DIV
  for i = 0, DIV - 1 do go(skynet, rc, num + i * sub, sub) end
  local sum = 0
  for _ = 1, DIV do sum = sum + recv(rc) end
  send(out, sum)
end

go(function()
  local c = chan()
  go(skynet, c, 0, SIZE)
  print(recv(c))
end)
run()
