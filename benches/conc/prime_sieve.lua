-- prime_sieve: Go's classic concurrent prime sieve with coroutines; prints the 2000th prime.
-- The scheduler and rendezvous channels come from sched.lua, shared by the Lua peers.
local COUNT = 2000

local S = dofile((arg[0]:match("(.*/)") or "./") .. "sched.lua")
local go, run, chan, send, recv, close = S.go, S.run, S.chan, S.send, S.recv, S.close
local function generate(out)
  local i = 2
  while true do
    send(out, i)
    i = i + 1
  end
end

local function filter(inp, out, prime)
  while true do
    local i = recv(inp)
    if i % prime ~= 0 then send(out, i) end
  end
end

go(function()
  local ch = chan()
  go(generate, ch)
  local prime = 0
  for _ = 1, COUNT do
    prime = recv(ch)
    local next = chan()
    go(filter, ch, next, prime)
    ch = next
  end
  print(prime)
end)
run()
