#!/usr/bin/env bash
# Run the csp benchmarks against their Lua 5.4, LuaJIT's interpreter
# (`luajit -joff`, the same .lua files), Python 3 and, where a NAME.js exists,
# Node peers.
#
#   benches/run.sh                 all benchmarks, 3 runs each
#   RUNS=5 benches/run.sh fib loop only fib and loop, 5 runs each
#   CSP=path/to/csp benches/run.sh use another csp binary
#
# Every peer's stdout must equal csp's; a mismatch is reported and makes the
# script exit 1 after the table is printed. Missing peers are skipped.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

CSP="${CSP:-target/release/csp}"
RUNS="${RUNS:-3}"
LUA="${LUA:-lua5.4}"
LUAJIT="${LUAJIT:-luajit}"
PYTHON="${PYTHON:-python3}"
NODE="${NODE:-node}"
ALL=(fib loop binary_trees nbody strings_maps string_build string_split)

# shellcheck source=benches/lib.sh
source "$here/lib.sh"
check_setup
select_benches "$here" "${ALL[*]}" "$@"

have_csp=1
if [[ ! -x "$CSP" ]]; then
    echo "warning: csp binary '$CSP' not found (build with: cargo build --release); timing peers only" >&2
    have_csp=0
fi
have_lua=1
# Lua 5.4 comes from Debian's packages; install it when missing and we may.
if ! command -v "$LUA" >/dev/null 2>&1 && [ "$LUA" = lua5.4 ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing lua5.4 with apt-get ..." >&2
    (apt-get update -qq && apt-get install -y -qq lua5.4) >/dev/null 2>&1 || true
fi
command -v "$LUA" >/dev/null 2>&1 || { echo "warning: $LUA not found; skipping Lua" >&2; have_lua=0; }
have_lj=1
command -v "$LUAJIT" >/dev/null 2>&1 || { echo "warning: $LUAJIT not found (apt-get install luajit); skipping LuaJIT" >&2; have_lj=0; }
have_py=1
command -v "$PYTHON" >/dev/null 2>&1 || { echo "warning: $PYTHON not found; skipping Python" >&2; have_py=0; }
have_node=1
command -v "$NODE" >/dev/null 2>&1 || { echo "warning: $NODE not found; skipping Node" >&2; have_node=0; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

mismatch=0
rows=()
for b in "${benches[@]}"; do
    echo "running $b ..." >&2
    t_csp="-"; t_lua="-"; t_lj="-"; t_py="-"; t_js="-"
    ref=""
    if [[ $have_csp == 1 ]]; then
        t_csp="$(time_runs "$b.csp" "$CSP" run "$here/$b.csp")"
        if [[ "$t_csp" == FAIL ]]; then
            echo "!!! $b: csp failed; stderr:" >&2
            sed 's/^/    /' "$tmp/$b.csp.err" | head -20 >&2
            mismatch=1
        else
            ref="$b.csp"
        fi
    fi
    if [[ $have_lua == 1 ]]; then
        t_lua="$(time_runs "$b.lua" "$LUA" "$here/$b.lua")"
        [[ "$t_lua" == FAIL ]] && { echo "!!! $b: lua failed" >&2; cat "$tmp/$b.lua.err" >&2; mismatch=1; }
        [[ -z "$ref" && "$t_lua" != FAIL ]] && ref="$b.lua"
    fi
    if [[ $have_lj == 1 ]]; then
        t_lj="$(time_runs "$b.luajit" "$LUAJIT" -joff "$here/$b.lua")"
        [[ "$t_lj" == FAIL ]] && { echo "!!! $b: luajit failed" >&2; cat "$tmp/$b.luajit.err" >&2; mismatch=1; }
    fi
    if [[ $have_py == 1 ]]; then
        t_py="$(time_runs "$b.py" "$PYTHON" "$here/$b.py")"
        [[ "$t_py" == FAIL ]] && { echo "!!! $b: python failed" >&2; cat "$tmp/$b.py.err" >&2; mismatch=1; }
        [[ -z "$ref" && "$t_py" != FAIL ]] && ref="$b.py"
    fi
    if [[ $have_node == 1 && -f "$here/$b.js" ]]; then
        t_js="$(time_runs "$b.js" "$NODE" "$here/$b.js")"
        [[ "$t_js" == FAIL ]] && { echo "!!! $b: node failed" >&2; cat "$tmp/$b.js.err" >&2; mismatch=1; }
    fi
    declare -A status=(["$b.lua"]="$t_lua" ["$b.luajit"]="$t_lj" ["$b.py"]="$t_py" ["$b.js"]="$t_js")
    for peer in "$b.lua" "$b.luajit" "$b.py" "$b.js"; do
        [[ -n "$ref" && "$peer" != "$ref" ]] || continue
        [[ "${status[$peer]}" != "-" && "${status[$peer]}" != FAIL ]] || continue
        if ! cmp -s "$tmp/$ref.out" "$tmp/$peer.out"; then
            echo "!!! OUTPUT MISMATCH in $b: $peer differs from $ref" >&2
            diff "$tmp/$ref.out" "$tmp/$peer.out" | head -20 | sed 's/^/    /' >&2 || true
            mismatch=1
        fi
    done
    unset status
    rows+=("$b $t_csp $t_lua $t_lj $t_py $t_js $(ratio "$t_csp" "$t_lua") $(ratio "$t_csp" "$t_lj") $(ratio "$t_csp" "$t_py") $(ratio "$t_csp" "$t_js")")
done

startup="-"
if [[ $have_csp == 1 ]]; then
    echo 'print(1)' > "$tmp/startup.csp"
    startup="$(RUNS=$((RUNS * 10)) time_runs startup "$CSP" run "$tmp/startup.csp")"
    if [[ "$startup" != FAIL ]]; then
        startup="$(python3 -c 'import sys; print("%.1f" % (float(sys.argv[1]) * 1000))' "$startup")"
        if [[ "$(cat "$tmp/startup.out")" != "1" ]]; then
            echo "!!! startup script printed '$(cat "$tmp/startup.out")', expected '1'" >&2
            mismatch=1
        fi
    fi
fi

echo
printf '%-14s %8s %8s %8s %9s %8s %8s %9s %8s %8s\n' benchmark "csp s" "lua s" "luajit s" "python s" "node s" csp/lua csp/lj csp/py csp/node
for row in "${rows[@]}"; do
    # shellcheck disable=SC2086
    printf '%-14s %8s %8s %8s %9s %8s %8s %9s %8s %8s\n' $row
done
echo
echo "median of $RUNS runs each (seconds, wall clock)"
if [[ "$startup" == "-" ]]; then
    echo "startup: n/a (no csp binary)"
else
    echo "startup: csp run on 'print(1)', median of $((RUNS * 10)) runs: ${startup} ms"
fi

if [[ $mismatch != 0 ]]; then
    echo
    echo "!!! FAILURES: some outputs differ or some runs failed (see messages above)" >&2
    exit 1
fi
