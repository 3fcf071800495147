-- The Benchmarks Game binary-trees, depth 16: allocation and GC pressure.
-- A node is a table {left, right}; a leaf is {nil, nil}.
local function make(depth)
    if depth == 0 then
        return { nil, nil }
    end
    return { make(depth - 1), make(depth - 1) }
end

local function check(node)
    if node[1] == nil then
        return 1
    end
    return 1 + check(node[1]) + check(node[2])
end

local function main(n)
    local min_depth = 4
    local max_depth = n
    if min_depth + 2 > n then
        max_depth = min_depth + 2
    end

    local stretch = max_depth + 1
    print(string.format("stretch tree of depth %d\t check: %d", stretch, check(make(stretch))))

    local long_lived = make(max_depth)

    local depth = min_depth
    while depth <= max_depth do
        local iterations = math.floor(2 ^ (max_depth - depth + min_depth))  -- also LuaJIT (no <<)
        local total = 0
        for _ = 1, iterations do
            total = total + check(make(depth))
        end
        print(string.format("%d\t trees of depth %d\t check: %d", iterations, depth, total))
        depth = depth + 2
    end

    print(string.format("long lived tree of depth %d\t check: %d", max_depth, check(long_lived)))
end

main(16)
