# The Benchmarks Game n-body, 500,000 steps: float arithmetic and dict field access.
# fixed(e) formats a float with 9 decimals using integer math, exactly as the csp
# version does, so that all three peers print the same text.
from math import sqrt, floor

PI = 3.141592653589793
SOLAR_MASS = 4 * PI * PI
DAYS_PER_YEAR = 365.24


def body(x, y, z, vx, vy, vz, mass):
    return {
        "x": x, "y": y, "z": z,
        "vx": vx * DAYS_PER_YEAR, "vy": vy * DAYS_PER_YEAR, "vz": vz * DAYS_PER_YEAR,
        "mass": mass * SOLAR_MASS,
    }


def make_bodies():
    return [
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
    ]


def offset_momentum(bodies):
    px = py = pz = 0.0
    for b in bodies:
        px = px + b["vx"] * b["mass"]
        py = py + b["vy"] * b["mass"]
        pz = pz + b["vz"] * b["mass"]
    sun = bodies[0]
    sun["vx"] = -px / SOLAR_MASS
    sun["vy"] = -py / SOLAR_MASS
    sun["vz"] = -pz / SOLAR_MASS


def energy(bodies):
    e = 0.0
    n = len(bodies)
    for i in range(n):
        b = bodies[i]
        e = e + 0.5 * b["mass"] * (b["vx"] * b["vx"] + b["vy"] * b["vy"] + b["vz"] * b["vz"])
        for j in range(i + 1, n):
            b2 = bodies[j]
            dx = b["x"] - b2["x"]
            dy = b["y"] - b2["y"]
            dz = b["z"] - b2["z"]
            e = e - (b["mass"] * b2["mass"]) / sqrt(dx * dx + dy * dy + dz * dz)
    return e


def advance(bodies, dt):
    n = len(bodies)
    for i in range(n):
        bi = bodies[i]
        for j in range(i + 1, n):
            bj = bodies[j]
            dx = bi["x"] - bj["x"]
            dy = bi["y"] - bj["y"]
            dz = bi["z"] - bj["z"]
            dsq = dx * dx + dy * dy + dz * dz
            dist = sqrt(dsq)
            mag = dt / (dsq * dist)
            bim = bi["mass"] * mag
            bjm = bj["mass"] * mag
            bi["vx"] = bi["vx"] - dx * bjm
            bi["vy"] = bi["vy"] - dy * bjm
            bi["vz"] = bi["vz"] - dz * bjm
            bj["vx"] = bj["vx"] + dx * bim
            bj["vy"] = bj["vy"] + dy * bim
            bj["vz"] = bj["vz"] + dz * bim
    for b in bodies:
        b["x"] = b["x"] + dt * b["vx"]
        b["y"] = b["y"] + dt * b["vy"]
        b["z"] = b["z"] + dt * b["vz"]


def fixed(e):
    sign = ""
    if e < 0:
        sign = "-"
    r = int(floor(abs(e) * 1000000000.0 + 0.5))
    frac = str(r % 1000000000)
    while len(frac) < 9:
        frac = "0" + frac
    return sign + str(r // 1000000000) + "." + frac


def main(steps):
    bodies = make_bodies()
    offset_momentum(bodies)
    print(fixed(energy(bodies)))
    for _ in range(steps):
        advance(bodies, 0.01)
    print(fixed(energy(bodies)))


main(500000)
