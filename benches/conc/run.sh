#!/usr/bin/env bash
# Run the csp concurrency benchmarks against Go, Node, Python asyncio and Lua peers.
#
#   benches/conc/run.sh                      all benchmarks, 3 runs each
#   RUNS=5 benches/conc/run.sh skynet switch only these, 5 runs each
#   CSP=path/to/csp benches/conc/run.sh      another csp binary
#
# Go runs twice: with GOMAXPROCS=1 (column go1, the like-for-like peer of a
# single-threaded scheduler) and with the default GOMAXPROCS (column go). Lines of
# output starting with '#' are timing-dependent and are not compared; every other
# line must be the same for every peer. A mismatch, a failed run or a timeout is
# reported with '!!!' and makes the script exit 1 after the table is printed.
# Missing peers (no binary, or no NAME.ext file) are skipped.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

CSP="${CSP:-target/release/csp}"
RUNS="${RUNS:-3}"
TIMEOUT="${TIMEOUT:-300}"
GO="${GO:-go}"
NODE="${NODE:-node}"
PYTHON="${PYTHON:-python3}"
LUA="${LUA:-lua5.4}"
ALL=(ping_pong thread_ring prime_sieve skynet mutex_counter switch heartbeat_lag gc_pause)

# shellcheck source=benches/lib.sh
source "$here/../lib.sh"
check_setup
select_benches "$here" "${ALL[*]}" "$@"

have() { command -v "$1" >/dev/null 2>&1; }
[[ -x "$CSP" ]] || { echo "warning: csp binary '$CSP' not found (build with: cargo build --release); timing peers only" >&2; CSP=""; }
have "$GO" || { echo "warning: $GO not found (apt-get install -y golang-go); skipping Go" >&2; GO=""; }
have "$NODE" || { echo "warning: $NODE not found; skipping Node" >&2; NODE=""; }
have "$PYTHON" || { echo "warning: $PYTHON not found; skipping Python" >&2; PYTHON=""; }
have "$LUA" || { echo "warning: $LUA not found (apt-get install -y lua5.4); skipping Lua" >&2; LUA=""; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Build every Go program once (go run would time the compiler too).
gobin=""
if [[ -n "$GO" ]]; then
    gobin="$tmp/go"
    mkdir -p "$gobin"
    for b in "${benches[@]}"; do
        for name in "$b" "${b}_base"; do
            [[ -f "$here/$name.go" ]] || continue
            echo "building $name.go ..." >&2
            if ! (cd "$here" && "$GO" build -o "$gobin/$name" "$name.go"); then
                echo "!!! go build $name.go failed" >&2
            fi
        done
    done
fi

RUN_TMP="$tmp"
export CSP RUNS TIMEOUT NODE PYTHON LUA RUN_TMP
status=0
python3 - "$here" "$gobin" "${benches[@]}" <<'PY' || status=$?
import os, statistics, subprocess, sys, threading, time

here, gobin, benches = sys.argv[1], sys.argv[2], sys.argv[3:]
RUNS, TIMEOUT = int(os.environ["RUNS"]), float(os.environ["TIMEOUT"])
CSP, NODE, PYTHON, LUA = (os.environ[k] for k in ("CSP", "NODE", "PYTHON", "LUA"))
PEERS = ["csp", "go1", "go", "node", "python", "lua"]

env_go1 = dict(os.environ, GOMAXPROCS="1")
env_default = {k: v for k, v in os.environ.items() if k != "GOMAXPROCS"}


def command(peer, name):
    """The command line and environment of PEER for benchmark file NAME, or None."""
    def src(ext):
        p = os.path.join(here, name + ext)
        return p if os.path.isfile(p) else None
    if peer == "csp" and CSP and src(".csp"):
        return [CSP, "run", src(".csp")], env_default
    if peer in ("go1", "go") and gobin and src(".go"):
        exe = os.path.join(gobin, name)
        if os.path.isfile(exe):
            return [exe], env_go1 if peer == "go1" else env_default
    if peer == "node" and NODE and src(".js"):
        return [NODE, src(".js")], env_default
    if peer == "python" and PYTHON and src(".py"):
        return [PYTHON, src(".py")], env_default
    if peer == "lua" and LUA and src(".lua"):
        return [LUA, src(".lua")], env_default
    return None


def run_once(cmd, env):
    """Wall seconds, peak RSS (KiB), exit status, stdout, stderr, timed_out."""
    out_f, err_f = os.path.join(tmpdir, "out"), os.path.join(tmpdir, "err")
    with open(out_f, "wb") as out, open(err_f, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        timed_out = []
        timer = threading.Timer(TIMEOUT, lambda: (timed_out.append(1), p.kill()))
        timer.start()
        _, st, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(st)
    return (wall, ru.ru_maxrss, p.returncode, open(out_f).read(), open(err_f).read(), bool(timed_out))


def measure(peer, names):
    """None if PEER has no program for NAMES[0]; else a dict per name with medians
    and outputs. The names' runs alternate, so drift on a noisy machine does not
    bias the ratio of a benchmark to its baseline."""
    cmds = [command(peer, n) for n in names]
    if cmds[0] is None:
        return None
    names = [n for n, c in zip(names, cmds) if c is not None]
    cmds = [c for c in cmds if c is not None]
    runs = {n: ([], [], []) for n in names}
    for _ in range(RUNS):
        for n, (cmd, env) in zip(names, cmds):
            wall, rss, rc, out, err, timed_out = run_once(cmd, env)
            if rc != 0 or timed_out:
                why = "timed out after %gs" % TIMEOUT if timed_out else "exited with %d" % rc
                print("!!! %s %s %s; stderr:" % (n, peer, why), file=sys.stderr)
                for line in err.splitlines()[:20]:
                    print("    " + line, file=sys.stderr)
                return {n: {"failed": True} for n in names}
            for acc, x in zip(runs[n], (wall, rss, out)):
                acc.append(x)
    return {n: {"failed": False, "time": statistics.median(w), "rss": statistics.median(r),
                "outs": o, "checked": checked(o[0])} for n, (w, r, o) in runs.items()}


def checked(out):
    return [l for l in out.splitlines() if not l.startswith("#")]


def tagged(out, key):
    """The number after '# KEY ' in OUT, or None."""
    for l in out.splitlines():
        if l.startswith("# " + key + " "):
            try:
                return float(l.split()[2])
            except (IndexError, ValueError):
                return None
    return None


def fmt(x, spec="%.3f"):
    return "-" if x is None else spec % x


bad = False
table = []
notes = []
tmpdir = os.environ["RUN_TMP"]
for b in benches:
    print("running %s ..." % b, file=sys.stderr)
    res, base = {}, {}
    with_base = os.path.isfile(os.path.join(here, b + "_base.csp"))
    for peer in PEERS:
        r = measure(peer, [b, b + "_base"] if with_base else [b])
        if r is not None:
            res[peer] = r[b]
            if b + "_base" in r:
                base[peer] = r[b + "_base"]

    # Every peer (and every baseline) must print the same non-'#' lines.
    ok = {p: r for p, r in res.items() if not r["failed"]}
    ok.update({p + "/base": r for p, r in base.items() if not r["failed"]})
    bad |= any(r["failed"] for r in list(res.values()) + list(base.values()))
    if ok:
        ref_peer = next(iter(ok))
        ref = ok[ref_peer]["checked"]
        for p, r in ok.items():
            if r["checked"] != ref:
                bad = True
                print("!!! OUTPUT MISMATCH in %s: %s printed %r, %s printed %r"
                      % (b, p, r["checked"][:5], ref_peer, ref[:5]), file=sys.stderr)

    def t(p, d=res):
        r = d.get(p)
        return None if r is None or r["failed"] else r["time"]

    ratio = t("csp") / t("go1") if t("csp") and t("go1") else None
    table.append([b] + [fmt(t(p)) for p in PEERS] + [fmt(ratio, "%.2f")])

    if b == "skynet":
        parts = ["%s %.0f MB" % (p, res[p]["rss"] / 1024) for p in PEERS if t(p) is not None]
        notes.append("skynet peak RSS (median): " + (", ".join(parts) or "-"))
    if b == "switch":
        parts = []
        for p in PEERS:
            if t(p) is None:
                continue
            try:
                n = int(res[p]["checked"][0])
            except (IndexError, ValueError):
                continue
            parts.append("%s %.0f" % (p, t(p) * 1e9 / n))
        notes.append("switch ns/switch (wall time incl. startup / switches): " + (", ".join(parts) or "-"))
        if t("go") is not None:
            notes.append("  (go with default GOMAXPROCS runs the two goroutines in parallel; go1 is the peer)")
    if b == "heartbeat_lag":
        for p in ("csp", "go1", "go"):
            if t(p) is None:
                continue
            lags = [tagged(o, "max_lag_ms") for o in res[p]["outs"]]
            beats = [tagged(o, "beats") for o in res[p]["outs"]]
            lag = max((x for x in lags if x is not None), default=None)
            beat = statistics.median([x for x in beats if x is not None] or [0])
            slow = "-"
            if t(p, base):
                slow = "%+.1f%%" % ((t(p) / t(p, base) - 1) * 100)
            notes.append("heartbeat_lag %-4s base %ss, with heartbeat %ss, slowdown %s, "
                         "max lag %s ms (worst of %d runs), beats %d (median)"
                         % (p, fmt(t(p, base)), fmt(t(p)), slow, fmt(lag, "%d"), RUNS, beat))

    if b == "gc_pause":
        for p in ("csp", "go1", "go"):
            if t(p) is None:
                continue
            cols = []
            for key in ("p50_ms", "p99_ms", "max_ms"):
                xs = [tagged(o, key) for o in res[p]["outs"]]
                xs = [x for x in xs if x is not None]
                cols.append("%s %s" % (key[:-3], fmt(statistics.median(xs) if xs else None, "%.2f")))
            notes.append("gc_pause %-4s heartbeat lag (median of runs): %s ms; peak RSS %.0f MB"
                         % (p, ", ".join(cols), res[p]["rss"] / 1024))

print()
head = ["benchmark", "csp s", "go1 s", "go s", "node s", "python s", "lua s", "csp/go1"]
widths = [14, 8, 8, 8, 8, 9, 8, 8]
print(" ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(head, widths))))
for row in table:
    print(" ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
print()
print("median of %d runs each (seconds, wall clock); go1 = GOMAXPROCS=1, go = default GOMAXPROCS (%d CPUs)"
      % (RUNS, os.cpu_count() or 0))
for n in notes:
    print(n)
if bad:
    print()
    print("!!! FAILURES: some outputs differ or some runs failed (see messages above)", file=sys.stderr)
    sys.exit(1)
PY
exit "$status"
