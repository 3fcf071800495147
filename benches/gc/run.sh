#!/usr/bin/env bash
# Collection pauses by the shape of what a program keeps (shapes.csp), csp
# beside Go with GOMAXPROCS=1, runs alternating between them:
#
#   benches/gc/run.sh                          every shape at 3M and 10M, 3 runs
#   RUNS=5 benches/gc/run.sh list ints         these shapes
#   SIZES=3000000 CSP=path/to/csp benches/gc/run.sh
#
# Prints, per shape, size and peer, the medians of the heartbeat's p50, p99
# and max lag (ms), of the wall time (s) and of the peak RSS (MB); exits 1 if
# the two peers' checksums differ.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
CSP="${CSP:-$root/target/release/csp}"
RUNS="${RUNS:-3}"
SIZES="${SIZES:-3000000 10000000}"
shapes=("$@")
[[ ${#shapes[@]} -gt 0 ]] || shapes=(list prealloc ints map chain)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && cp "$here/shapes.go" main.go && go mod init shapes >/dev/null 2>&1 && go build -o shapes-go .)
python3 - "$RUNS" "$CSP" "$tmp/shapes-go" "$here/shapes.csp" "$SIZES" "${shapes[@]}" <<'PY'
import os, resource, statistics, subprocess, sys, time
runs, csp, gobin, script, sizes, shapes = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5].split(), sys.argv[6:]
peers = {"csp": lambda s, n: [csp, "run", script, s, n], "go1": lambda s, n: [gobin, s, n]}
env = dict(os.environ, GOMAXPROCS="1")
bad = False
print(f"{'shape':9} {'live':>9} {'peer':4} {'p50':>7} {'p99':>7} {'max':>7} {'time':>6} {'rss':>6}")
for shape in shapes:
    for n in sizes:
        got = {p: [] for p in peers}
        sums = {}
        for _ in range(runs):
            for p, cmd in peers.items():
                t = time.time()
                r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd(shape, n), capture_output=True, text=True, env=env)
                wall = time.time() - t
                if r.returncode != 0:
                    print(f"!!! {p} {shape} {n} failed: {r.stderr[-300:]}"); bad = True; continue
                lines = r.stdout.splitlines()
                sums[p] = [l for l in lines if not l.startswith("#")]
                vals = dict(l[2:].split() for l in lines if l.startswith("# "))
                rss = int(r.stderr.strip().splitlines()[-1]) / 1024
                got[p].append((float(vals["p50_ms"]), float(vals["p99_ms"]), float(vals["max_ms"]), wall, rss))
        if len(set(map(tuple, sums.values()))) > 1:
            print(f"!!! {shape} {n}: checksums differ: {sums}"); bad = True
        for p, rows in got.items():
            if rows:
                m = [statistics.median(c) for c in zip(*rows)]
                print(f"{shape:9} {n:>9} {p:4} {m[0]:7.2f} {m[1]:7.2f} {m[2]:7.2f} {m[3]:6.2f} {m[4]:6.0f}")
sys.exit(1 if bad else 0)
PY
