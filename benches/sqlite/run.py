#!/usr/bin/env python3
"""SQLite benchmark: benches/sqlite/bench.csp beside bench.py (Python's sqlite3).

    benches/sqlite/run.sh                  N=100000 rows, 3 runs each
    RUNS=5 N=20000 benches/sqlite/run.sh

Each run makes a fresh database file in a temporary directory. Runs alternate
between csp and Python. Both print each phase's milliseconds and a checksum,
which must agree (a difference is reported with '!!!' and the script exits 1).
The table gives the median of each phase and csp/python (below 1: csp faster).
"""
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CSP = os.environ.get("CSP", os.path.join(ROOT, "target/release/csp"))
PYTHON = os.environ.get("PYTHON", "python3")
RUNS = int(os.environ.get("RUNS", "3"))
N = int(os.environ.get("N", "100000"))
PHASES = ["insert", "exec_many", "query", "rows", "point"]


def run(cmd, path):
    if os.path.exists(path):
        os.remove(path)
    out = subprocess.run(cmd + [path, str(N)], cwd=HERE, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("!!! %s failed:\n%s%s" % (" ".join(cmd), out.stdout, out.stderr))
    times, check = {}, None
    for line in out.stdout.splitlines():
        name, value = line.split()
        if name == "check":
            check = value
        else:
            times[name] = int(value)
    return times, check


def main():
    if not os.path.exists(CSP):
        sys.exit("error: %s not found (cargo build --release)" % CSP)
    peers = {"csp": [CSP, "run", "bench.csp"], "python": [PYTHON, "bench.py"]}
    got = {p: {ph: [] for ph in PHASES} for p in peers}
    checks = set()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(RUNS):
            order = list(peers) if i % 2 == 0 else list(reversed(peers))
            for p in order:
                times, check = run(peers[p], os.path.join(tmp, p + ".db"))
                checks.add(check)
                for ph in PHASES:
                    got[p][ph].append(times[ph])
                print("run %d %s: %s" % (i + 1, p, " ".join("%s %d" % (ph, times[ph]) for ph in PHASES)),
                      file=sys.stderr, flush=True)
    print("N = %d rows, %d runs, median ms" % (N, RUNS))
    print("%-10s %9s %9s %9s" % ("phase", "csp", "python", "csp/py"))
    for ph in PHASES:
        c, p = statistics.median(got["csp"][ph]), statistics.median(got["python"][ph])
        print("%-10s %9.0f %9.0f %9.2f" % (ph, c, p, c / p if p else float("nan")))
    if len(checks) != 1:
        print("!!! the checksums differ: %s" % sorted(checks))
        sys.exit(1)


main()
