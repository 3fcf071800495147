#!/usr/bin/env python3
"""The cost of `--trace`: alternating runs of a program with and without it,
timed by perf_counter (finer than /usr/bin/time's 10 ms), medians and ratio.

    benches/trace_cost.py [CSP] [PROGRAM] [TRACE_FILE] [RUNS]

Defaults: target/release/csp, benches/trace_pingpong.csp, /tmp/tp.json, 11.
TRACE_FILE /dev/null measures the formatting alone."""
import os
import statistics
import subprocess
import sys
import time

args = sys.argv[1:] + [None] * 4
csp = args[0] or "target/release/csp"
prog = args[1] or "benches/trace_pingpong.csp"
out = args[2] or "/tmp/tp.json"
runs = int(args[3] or 11)


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


plain, traced = [], []
for _ in range(runs):
    plain.append(timed([csp, "run", prog]))
    if out != "/dev/null" and os.path.exists(out):
        os.remove(out)
    traced.append(timed([csp, "run", "--trace", out, prog]))
p, t = statistics.median(plain), statistics.median(traced)
print("plain %.1f ms, traced %.1f ms, ratio %.2f (medians of %d alternating runs)" % (p * 1e3, t * 1e3, t / p, runs))
