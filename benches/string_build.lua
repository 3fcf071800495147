-- String building: 1,000,000 appends of short words, then the length and both
-- ends of the result. Lua's `s = s .. w` copies the whole string each time
-- (quadratic: days at this size), so this uses Lua's idiom, a table of pieces
-- joined once with table.concat.
local words = {"alpha", "be", "gamma", "d", "epsilon", "zeta", "eta"}
local parts = {}
for i = 0, 999999 do
    parts[#parts + 1] = words[i % 7 + 1]
end
local s = table.concat(parts)
print(#s)
print(string.sub(s, 1, 24))
print(string.sub(s, #s - 23, #s))
