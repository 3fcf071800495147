#!/usr/bin/env python3
"""Several csp builds on the Are We Fast Yet? suite, beside `luajit -joff` and
Lua 5.4, in alternating runs: each round runs every peer once per benchmark,
the starting peer rotating. Prints the median wall seconds, each build over
`luajit -joff` and over the first build, and their geomeans.

    benches/awfy_builds.py OLD_CSP NEW_CSP [...]
    RUNS=5 benches/awfy_builds.py ...      (default 5 rounds)

The first seven benchmarks (sizes are awfy/run.sh's) are ../shared/bench/awfy's
(AWFY= to move it); the other seven are this repository's ports in benches/awfy
(csp/ and, from the suite's repository, lua/). ONLY=Towers,NBody picks some.
"""
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AWFY = os.environ.get("AWFY", os.path.join(HERE, "..", "..", "shared", "bench", "awfy"))
MORE = os.path.join(HERE, "awfy")
SEEN = [("Bounce", 10, 200), ("NBody", 1, 250000), ("Queens", 10, 200), ("Sieve", 10, 400),
        ("Richards", 10, 3), ("DeltaBlue", 10, 2000), ("Json", 10, 15)]
UNSEEN = [("Towers", 5, 100), ("Permute", 10, 100), ("Mandelbrot", 3, 500), ("List", 10, 100),
          ("Storage", 5, 100), ("CD", 1, 100), ("Havlak", 1, 1)]
SIZES = [(b, i, n, AWFY) for b, i, n in SEEN] + [(b, i, n, MORE) for b, i, n in UNSEEN]
if os.environ.get("ONLY"):
    SIZES = [s for s in SIZES if s[0] in os.environ["ONLY"].split(",")]


def main():
    builds = [os.path.realpath(b) for b in sys.argv[1:]]
    if not builds:
        sys.exit(__doc__)
    runs = int(os.environ.get("RUNS", "5"))
    labels = ["csp%d" % i for i in range(len(builds))]
    peers = {lab: ([b, "run", "harness.csp"], "csp") for lab, b in zip(labels, builds)}
    peers["luajit"] = (["luajit", "-joff", "harness.lua"], "lua")
    peers["lua"] = (["lua5.4", "harness.lua"], "lua")
    names = list(peers)
    times = {}
    for bench, i, n, root in SIZES:
        for r in range(runs):
            for p in names[r % len(names):] + names[:r % len(names)]:
                cmd, d = peers[p]
                d = os.path.join(root, d if root == MORE or d == "csp" else "peers/Lua")
                t = time.perf_counter()
                out = subprocess.run(cmd + [bench, str(i), str(n)], cwd=d, capture_output=True)
                if out.returncode != 0:
                    sys.exit("%s %s failed:\n%s" % (p, bench, out.stderr.decode()[-500:]))
                times.setdefault((bench, p), []).append(time.perf_counter() - t)
    for lab, b in zip(labels, builds):
        print("%s = %s" % (lab, b))
    m = statistics.median
    ratios = [l + "/lj" for l in labels] + [l + "/lua" for l in labels] + [l + "/csp0" for l in labels[1:]]
    print("%-10s" % "benchmark" + "".join("%10s" % p for p in names) + "".join("%11s" % r for r in ratios))
    logs = {r: [] for r in ratios}
    for bench, _, _, _ in SIZES:
        t = {p: m(times[(bench, p)]) for p in names}
        row = ([t[l] / t["luajit"] for l in labels] + [t[l] / t["lua"] for l in labels]
               + [t[l] / t[labels[0]] for l in labels[1:]])
        for r, v in zip(ratios, row):
            logs[r].append(math.log(v))
        print("%-10s" % bench + "".join("%10.3f" % t[p] for p in names) + "".join("%11.3f" % v for v in row))
    geo = [math.exp(sum(logs[r]) / len(logs[r])) for r in ratios]
    print("%-10s" % "geomean" + " " * 10 * len(names) + "".join("%11.3f" % v for v in geo))


if __name__ == "__main__":
    main()
