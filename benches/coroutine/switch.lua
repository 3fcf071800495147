-- switch: 1,000,000 coroutine resume/yield pairs. A generator yields i for i in
-- 0..1000000 and the driver sums the values; prints the sum (499999500000).
local N = 1000000
local resume, status, yield = coroutine.resume, coroutine.status, coroutine.yield

local gen = coroutine.create(function()
  for i = 0, N - 1 do
    yield(i)
  end
end)

local sum = 0
local _, v = resume(gen)
while status(gen) ~= "dead" do
  sum = sum + v
  _, v = resume(gen)
end
print(sum)
