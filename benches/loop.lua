-- A tight counted loop with integer multiply, modulo and accumulate.
local function main()
    local sum = 0
    for i = 0, 30000000 - 1 do
        sum = sum + (i * i) % 7
    end
    print(sum)
end

main()
