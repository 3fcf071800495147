-- String splitting: 500,000 CSV rows built with string.format and joined into
-- one 12.6 MB text, split into lines, each line split on commas; sums one
-- numeric field (parsed with tonumber), counts a boolean field and the name
-- letters, and prints both ends of the text. Lua has no split: the usual
-- string.find loop (plain search), as in strings_maps.lua.
local function split(s, sep)
    local parts = {}
    local start = 1
    while true do
        local i = string.find(s, sep, start, true)
        if i == nil then
            parts[#parts + 1] = string.sub(s, start)
            return parts
        end
        parts[#parts + 1] = string.sub(s, start, i - 1)
        start = i + #sep
    end
end

local function main(n)
    local rows = {}
    for i = 0, n - 1 do
        rows[#rows + 1] = string.format("%d,name%d,%d,%s", i, i % 1000, (i * 7) % 10007, tostring(i % 3 == 0))
    end
    local text = table.concat(rows, "\n")
    local lines = split(text, "\n")
    local total, yes, letters = 0, 0, 0
    for _, line in ipairs(lines) do
        local f = split(line, ",")
        total = total + tonumber(f[3])
        if f[4] == "true" then
            yes = yes + 1
        end
        letters = letters + #f[2]
    end
    print("lines: " .. #lines .. " chars: " .. #text)
    print("total: " .. total .. " true: " .. yes .. " letters: " .. letters)
    print(lines[1])
    print(lines[#lines])
end

main(500000)
