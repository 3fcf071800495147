-- thread_ring (Benchmarks Game): 503 coroutines in a ring, a token passed 5,000,000 times.
-- A minimal cooperative scheduler (FIFO run queue) with rendezvous channels.
local FIBERS = 503
local N = 5000000

local create, resume, yield, running = coroutine.create, coroutine.resume, coroutine.yield, coroutine.running
local qco, qval, qhead, qtail = {}, {}, 1, 0
local function ready(co, v) qtail = qtail + 1; qco[qtail] = co; qval[qtail] = v end
local function go(f, ...)
  local args = table.pack(...)
  ready(create(function() return f(table.unpack(args, 1, args.n)) end))
end
local function run()
  while qhead <= qtail do
    local co, v = qco[qhead], qval[qhead]
    qco[qhead], qval[qhead] = nil, nil
    qhead = qhead + 1
    local ok, err = resume(co, v)
    if not ok then error(debug.traceback(co, err), 0) end
  end
end
local function chan() return { sco = {}, sv = {}, sh = 1, st = 0, rq = {}, rh = 1, rt = 0, closed = false } end
local function send(ch, v)
  local h = ch.rh
  if h <= ch.rt then
    local r = ch.rq[h]; ch.rq[h] = nil; ch.rh = h + 1
    ready(r, v)
    return
  end
  local t = ch.st + 1; ch.st = t; ch.sco[t] = running(); ch.sv[t] = v
  yield()
end
local function recv(ch) -- nil once closed and drained
  local h = ch.sh
  if h <= ch.st then
    local s, v = ch.sco[h], ch.sv[h]
    ch.sco[h], ch.sv[h] = nil, nil; ch.sh = h + 1
    ready(s, nil)
    return v
  end
  if ch.closed then return nil end
  local t = ch.rt + 1; ch.rt = t; ch.rq[t] = running()
  return yield()
end
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
