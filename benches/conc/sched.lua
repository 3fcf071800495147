-- The cooperative scheduler the Lua peers share: a FIFO run queue of coroutines
-- and unbuffered (rendezvous) channels. dofile() it to get its functions.
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
local function pause() ready(running(), nil); yield() end -- to the back of the queue
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
local function close(ch)
  ch.closed = true
  for i = ch.rh, ch.rt do ready(ch.rq[i], nil); ch.rq[i] = nil end
  ch.rh = ch.rt + 1
end

return { go = go, run = run, ready = ready, pause = pause, chan = chan, send = send, recv = recv, close = close }
