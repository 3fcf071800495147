-- Strings and maps: build 200,000 words, join and split them, count them in a map,
-- then rank the words by count (descending, ties alphabetical) with a comparator sort.
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
    local words = {}
    for i = 0, n - 1 do
        words[#words + 1] = "w" .. tostring((i * 7919) % 5003)
    end
    local text = table.concat(words, " ")
    local parts = split(text, " ")

    local counts = {}
    local keys = {}
    local total_len = 0
    for _, w in ipairs(parts) do
        total_len = total_len + #w
        local c = counts[w]
        if c == nil then
            counts[w] = 1
            keys[#keys + 1] = w
        else
            counts[w] = c + 1
        end
    end

    print("words: " .. #parts .. " chars: " .. #text .. " letters: " .. total_len)
    print("distinct: " .. #keys)
    print("w0: " .. tostring(counts["w0"]) .. " w42: " .. tostring(counts["w42"]) ..
          " w5002: " .. tostring(counts["w5002"]) .. " w9999: " .. (counts["w9999"] == nil and "nil" or tostring(counts["w9999"])))

    table.sort(keys, function(a, b)
        local ca, cb = counts[a], counts[b]
        if ca ~= cb then
            return ca > cb
        end
        return a < b
    end)
    for i = 1, 5 do
        print(keys[i] .. " " .. counts[keys[i]])
    end
    print("last: " .. keys[#keys] .. " " .. counts[keys[#keys]])
end

main(200000)
