#!/usr/bin/env bash
# Coroutine benchmarks: csp against Lua 5.4 coroutines and Python generators.
#
#   benches/coroutine/run.sh             every benchmark, 3 runs each
#   RUNS=5 benches/coroutine/run.sh switch
#   CSP=path/to/csp benches/coroutine/run.sh
#
# Prints the median wall-clock seconds of each peer, the nanoseconds per
# resume/yield pair (wall time including process start-up, divided by the number
# of pairs) and csp/lua. Every peer's stdout must equal csp's; a mismatch or a
# failed run is reported with !!! and makes the script exit 1 after the table.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

CSP="${CSP:-target/release/csp}"
RUNS="${RUNS:-3}"
LUA="${LUA:-lua5.4}"
PYTHON="${PYTHON:-python3}"
ALL=(switch)
# resume/yield pairs each benchmark performs
declare -A PAIRS=([switch]=1000000)

if ! [[ "$RUNS" =~ ^[1-9][0-9]*$ ]]; then
    echo "error: RUNS must be a positive integer, got '$RUNS'" >&2
    exit 64
fi
command -v python3 >/dev/null 2>&1 || { echo "error: python3 is needed for timing" >&2; exit 64; }

if [[ $# -gt 0 ]]; then benches=("$@"); else benches=("${ALL[@]}"); fi
for b in "${benches[@]}"; do
    if [[ ! -f "$here/$b.csp" || -z "${PAIRS[$b]:-}" ]]; then
        echo "error: no benchmark '$b' (expected $here/$b.csp and an entry in PAIRS)" >&2
        exit 64
    fi
done

peers=()
if [[ -x "$CSP" ]]; then peers+=(csp); else echo "warning: csp binary '$CSP' not found (cargo build --release); timing peers only" >&2; fi
if command -v "$LUA" >/dev/null 2>&1; then peers+=(lua); else echo "warning: $LUA not found; skipping Lua" >&2; fi
if command -v "$PYTHON" >/dev/null 2>&1; then peers+=(py); else echo "warning: $PYTHON not found; skipping Python" >&2; fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# time_runs NAME CMD... : runs CMD $RUNS times, keeps the first run's stdout in
# $tmp/NAME.out (stderr in $tmp/NAME.err) and prints the median seconds, or FAIL.
time_runs() {
    local name="$1"
    shift
    python3 - "$RUNS" "$tmp/$name.out" "$tmp/$name.err" "$@" <<'PY'
import statistics, subprocess, sys, time
runs, out_path, err_path, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
times = []
for i in range(runs):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    times.append(time.perf_counter() - t0)
    if i == 0:
        open(out_path, "wb").write(p.stdout)
    if p.returncode != 0:
        open(err_path, "wb").write(p.stderr)
        print("FAIL")
        sys.exit(0)
print("%.3f" % statistics.median(times))
PY
}

# ns SECONDS PAIRS: nanoseconds per pair, or "-"
ns() {
    python3 -c 'import sys
try:
    print("%.0f" % (float(sys.argv[1]) * 1e9 / int(sys.argv[2])))
except ValueError:
    print("-")' "$1" "$2"
}

ratio() {
    python3 -c 'import sys
try:
    print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))
except (ValueError, ZeroDivisionError):
    print("-")' "$1" "$2"
}

failed=0
rows=()
for b in "${benches[@]}"; do
    echo "running $b ..." >&2
    declare -A t=([csp]="-" [lua]="-" [py]="-")
    ref=""
    for p in "${peers[@]}"; do
        case $p in
            csp) cmd=("$CSP" run "$here/$b.csp") ;;
            lua) cmd=("$LUA" "$here/$b.lua") ;;
            py) cmd=("$PYTHON" "$here/$b.py") ;;
        esac
        [[ -f "${cmd[-1]}" ]] || continue
        t[$p]="$(time_runs "$b.$p" "${cmd[@]}")"
        if [[ "${t[$p]}" == FAIL ]]; then
            echo "!!! $b: $p failed; stderr:" >&2
            sed 's/^/    /' "$tmp/$b.$p.err" | head -20 >&2
            failed=1
            continue
        fi
        if [[ -z "$ref" ]]; then
            ref="$p"
        elif ! cmp -s "$tmp/$b.$ref.out" "$tmp/$b.$p.out"; then
            echo "!!! OUTPUT MISMATCH in $b: $p differs from $ref" >&2
            diff "$tmp/$b.$ref.out" "$tmp/$b.$p.out" | head -20 | sed 's/^/    /' >&2 || true
            failed=1
        fi
    done
    n="${PAIRS[$b]}"
    rows+=("$b ${t[csp]} ${t[lua]} ${t[py]} $(ns "${t[csp]}" "$n") $(ns "${t[lua]}" "$n") $(ns "${t[py]}" "$n") $(ratio "${t[csp]}" "${t[lua]}")")
    unset t
done

echo
printf '%-10s %8s %8s %8s %9s %9s %9s %8s\n' benchmark "csp s" "lua s" "py s" "csp ns" "lua ns" "py ns" csp/lua
for row in "${rows[@]}"; do
    # shellcheck disable=SC2086
    printf '%-10s %8s %8s %8s %9s %9s %9s %8s\n' $row
done
echo
echo "median of $RUNS runs each; ns = wall time (start-up included) per resume/yield pair"

if [[ $failed != 0 ]]; then
    echo
    echo "!!! FAILURES: some outputs differ or some runs failed (see messages above)" >&2
    exit 1
fi
