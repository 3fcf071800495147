#!/usr/bin/env python3
"""The cost of `--profile` (docs/profiling.md): alternating runs of each
program with and without `--profile /dev/null` (the sampling and the encoding,
without keeping the file), timed by perf_counter; medians and their ratio.

    benches/profile_cost.py [CSP] [RUNS] [HZ] [PROGRAM...]

Defaults: target/release/csp, 11 runs, 100 Hz (the default rate), and
programs that compute (fib, nbody, binary_trees, strings_maps) and one that
does nothing but switch fibers (trace_pingpong: every switch parks a fiber and
wakes another, the most blocked-time bookkeeping per instruction)."""
import statistics
import subprocess
import sys
import time

args = sys.argv[1:]
csp = args[0] if len(args) > 0 else "target/release/csp"
runs = int(args[1]) if len(args) > 1 else 11
hz = args[2] if len(args) > 2 else "100"
progs = args[3:] or [
    "benches/fib.csp",
    "benches/nbody.csp",
    "benches/binary_trees.csp",
    "benches/strings_maps.csp",
    "benches/trace_pingpong.csp",
]


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


for prog in progs:
    plain, profiled = [], []
    for _ in range(runs):
        plain.append(timed([csp, "run", prog]))
        profiled.append(timed([csp, "run", "--profile", "/dev/null", "--profile-hz", hz, prog]))
    p, q = statistics.median(plain), statistics.median(profiled)
    print("%-30s plain %8.1f ms, profiled %8.1f ms, ratio %.3f" % (prog, p * 1e3, q * 1e3, q / p))
