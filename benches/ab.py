#!/usr/bin/env python3
"""A/B: two csp binaries on the same benchmarks, runs alternating (A B, B A, ...)
so machine drift hits both alike. Prints median wall seconds, peak RSS (MB) and
the new/old ratios.

    benches/ab.py OLD_CSP NEW_CSP benches/fib.csp benches/conc/skynet.csp ...
    RUNS=21 benches/ab.py ...           (default 11 runs of each)
"""
import os
import re
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    runs = int(os.environ.get("RUNS", "11"))
    bins = {"old": sys.argv[1], "new": sys.argv[2]}
    benches = sys.argv[3:]
    res = {}
    for b in benches:
        for i in range(runs):
            for v in ("old", "new") if i % 2 == 0 else ("new", "old"):
                t0 = time.perf_counter()
                p = subprocess.run(["/usr/bin/time", "-f", "RSS %M", bins[v], "run", b], capture_output=True, text=True)
                dt = time.perf_counter() - t0
                if p.returncode != 0:
                    sys.exit(f"{bins[v]} run {b} failed:\n{p.stderr}")
                rss = int(re.search(r"RSS (\d+)", p.stderr).group(1)) / 1024
                r = res.setdefault((b, v), {"t": [], "rss": []})
                r["t"].append(dt)
                r["rss"].append(rss)
    m = statistics.median
    print("%-24s %8s %8s %7s %8s %8s %7s" % ("benchmark", "old s", "new s", "new/old", "old MB", "new MB", "new/old"))
    for b in benches:
        o, n = res[(b, "old")], res[(b, "new")]
        ot, nt, om, nm = m(o["t"]), m(n["t"]), m(o["rss"]), m(n["rss"])
        print("%-24s %8.3f %8.3f %7.3f %8.1f %8.1f %7.3f" % (os.path.basename(b), ot, nt, nt / ot, om, nm, nm / om))


main()
