# Shared by benches/run.sh, benches/conc/run.sh and benches/coroutine/run.sh
# (sourced, not run). Expects RUNS set; time_runs also expects $tmp.

# Checks RUNS and that python3 (the timer) is there; exits 64 otherwise.
check_setup() {
    if ! [[ "$RUNS" =~ ^[1-9][0-9]*$ ]]; then
        echo "error: RUNS must be a positive integer, got '$RUNS'" >&2
        exit 64
    fi
    if ! command -v python3 >/dev/null 2>&1; then
        echo "error: python3 is needed for timing" >&2
        exit 64
    fi
}

# select_benches DIR "ALL..." ARGS...: sets `benches` to ARGS, or to ALL when there
# are none, and exits 64 if one has no DIR/NAME.csp.
select_benches() {
    local dir="$1"
    local -a all
    read -r -a all <<< "$2"
    shift 2
    if [[ $# -gt 0 ]]; then benches=("$@"); else benches=("${all[@]}"); fi
    for b in "${benches[@]}"; do
        if [[ ! -f "$dir/$b.csp" ]]; then
            echo "error: no benchmark '$b' (expected $dir/$b.csp)" >&2
            exit 64
        fi
    done
}

# time_runs NAME CMD...: runs CMD $RUNS times, keeps the first run's stdout in
# $tmp/NAME.out (stderr of the first or failing run in $tmp/NAME.err) and prints
# the median wall-clock seconds, or FAIL if a run fails.
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
        open(err_path, "wb").write(p.stderr)
    if p.returncode != 0:
        open(err_path, "wb").write(p.stderr)
        print("FAIL")
        sys.exit(0)
print("%.3f" % statistics.median(times))
PY
}

# ratio A B: A/B with two decimals, or "-" if either is not a number.
ratio() {
    python3 -c 'import sys
try:
    print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))
except (ValueError, ZeroDivisionError):
    print("-")' "$1" "$2"
}
