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

# shellcheck source=benches/lib.sh
source "$here/../lib.sh"
check_setup
select_benches "$here" "${ALL[*]}" "$@"
for b in "${benches[@]}"; do
    if [[ -z "${PAIRS[$b]:-}" ]]; then
        echo "error: benchmark '$b' has no entry in PAIRS" >&2
        exit 64
    fi
done

peers=()
if [[ -x "$CSP" ]]; then peers+=(csp); else echo "warning: csp binary '$CSP' not found (cargo build --release); timing peers only" >&2; fi
if command -v "$LUA" >/dev/null 2>&1; then peers+=(lua); else echo "warning: $LUA not found; skipping Lua" >&2; fi
if command -v "$PYTHON" >/dev/null 2>&1; then peers+=(py); else echo "warning: $PYTHON not found; skipping Python" >&2; fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# ns SECONDS PAIRS: nanoseconds per pair, or "-"
ns() {
    python3 -c 'import sys
try:
    print("%.0f" % (float(sys.argv[1]) * 1e9 / int(sys.argv[2])))
except ValueError:
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
