-- The Benchmarks Game n-body, 500,000 steps: float arithmetic and table field access.
-- fixed(e) formats a float with 9 decimals using integer math, exactly as the csp
-- version does, so that all three peers print the same text.
local PI = 3.141592653589793
local SOLAR_MASS = 4 * PI * PI
local DAYS_PER_YEAR = 365.24
local sqrt, floor, abs = math.sqrt, math.floor, math.abs

local function body(x, y, z, vx, vy, vz, mass)
    return {
        x = x, y = y, z = z,
        vx = vx * DAYS_PER_YEAR, vy = vy * DAYS_PER_YEAR, vz = vz * DAYS_PER_YEAR,
        mass = mass * SOLAR_MASS,
    }
end

local function make_bodies()
    return {
        body(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        body(4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01,
             1.66007664274403694e-03, 7.69901118419740425e-03, -6.90460016972063023e-05,
             9.54791938424326609e-04),
        body(8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01,
             -2.76742510726862411e-03, 4.99852801234917238e-03, 2.30417297573763929e-05,
             2.85885980666130812e-04),
        body(1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01,
             2.96460137564761618e-03, 2.37847173959480950e-03, -2.96589568540237556e-05,
             4.36624404335156298e-05),
        body(1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01,
             2.68067772490389322e-03, 1.62824170038242295e-03, -9.51592254519715870e-05,
             5.15138902046611451e-05),
    }
end

local function offset_momentum(bodies)
    local px, py, pz = 0.0, 0.0, 0.0
    for _, b in ipairs(bodies) do
        px = px + b.vx * b.mass
        py = py + b.vy * b.mass
        pz = pz + b.vz * b.mass
    end
    local sun = bodies[1]
    sun.vx = -px / SOLAR_MASS
    sun.vy = -py / SOLAR_MASS
    sun.vz = -pz / SOLAR_MASS
end

local function energy(bodies)
    local e = 0.0
    local n = #bodies
    for i = 1, n do
        local b = bodies[i]
        e = e + 0.5 * b.mass * (b.vx * b.vx + b.vy * b.vy + b.vz * b.vz)
        for j = i + 1, n do
            local b2 = bodies[j]
            local dx = b.x - b2.x
            local dy = b.y - b2.y
            local dz = b.z - b2.z
            e = e - (b.mass * b2.mass) / sqrt(dx * dx + dy * dy + dz * dz)
        end
    end
    return e
end

local function advance(bodies, dt)
    local n = #bodies
    for i = 1, n do
        local bi = bodies[i]
        for j = i + 1, n do
            local bj = bodies[j]
            local dx = bi.x - bj.x
            local dy = bi.y - bj.y
            local dz = bi.z - bj.z
            local dsq = dx * dx + dy * dy + dz * dz
            local dist = sqrt(dsq)
            local mag = dt / (dsq * dist)
            local bim = bi.mass * mag
            local bjm = bj.mass * mag
            bi.vx = bi.vx - dx * bjm
            bi.vy = bi.vy - dy * bjm
            bi.vz = bi.vz - dz * bjm
            bj.vx = bj.vx + dx * bim
            bj.vy = bj.vy + dy * bim
            bj.vz = bj.vz + dz * bim
        end
    end
    for _, b in ipairs(bodies) do
        b.x = b.x + dt * b.vx
        b.y = b.y + dt * b.vy
        b.z = b.z + dt * b.vz
    end
end

local function fixed(e)
    local sign = ""
    if e < 0 then
        sign = "-"
    end
    -- floor gives an integer in Lua 5.4; written so LuaJIT (5.1) runs it too.
    local r = floor(abs(e) * 1000000000.0 + 0.5)
    local frac = tostring(r % 1000000000)
    while #frac < 9 do
        frac = "0" .. frac
    end
    return sign .. tostring(floor(r / 1000000000)) .. "." .. frac
end

local function main(steps)
    local bodies = make_bodies()
    offset_momentum(bodies)
    print(fixed(energy(bodies)))
    for _ = 1, steps do
        advance(bodies, 0.01)
    end
    print(fixed(energy(bodies)))
end

main(500000)
