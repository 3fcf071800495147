#!/usr/bin/env bash
# Show that memory stays flat while benches/gc_cycles.csp builds and drops cyclic
# garbage for about a minute: runs it under /usr/bin/time -v and samples the
# resident set size (VmRSS from /proc/PID/status) of the csp process every second.
#
#   benches/gc_memory.sh               the default iteration count (~60 s)
#   benches/gc_memory.sh 5000000       a shorter run
#   CSP=path/to/csp benches/gc_memory.sh
#
# Prints one "t=SECONDS rss=KB" line per sample, then the program's checksum and
# the /usr/bin/time -v report (see "Maximum resident set size").
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

CSP="${CSP:-target/release/csp}"
if [[ ! -x "$CSP" ]]; then
    echo "error: $CSP not found; run cargo build --release first" >&2
    exit 64
fi
if [[ ! -x /usr/bin/time ]]; then
    echo "error: /usr/bin/time is needed (apt-get install time)" >&2
    exit 64
fi

out="$(mktemp)"
report="$(mktemp)"
trap 'rm -f "$out" "$report"' EXIT

/usr/bin/time -v -o "$report" "$CSP" run benches/gc_cycles.csp "$@" >"$out" &
timer=$!

# The csp process is /usr/bin/time's only child.
pid=""
for _ in $(seq 100); do
    pid="$(cat "/proc/$timer/task/$timer/children" 2>/dev/null | tr -d ' ' || true)"
    [[ -n "$pid" ]] && break
    sleep 0.05
done
if [[ -z "$pid" ]]; then
    echo "error: could not find the csp process" >&2
    wait "$timer"
    exit 1
fi

echo "sampling VmRSS of pid $pid every second"
t=0
while rss="$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)" && [[ -n "$rss" ]]; do
    echo "t=${t}s rss=${rss} kB"
    sleep 1
    t=$((t + 1))
done

status=0
wait "$timer" || status=$?
echo "checksum: $(cat "$out")"
cat "$report"
exit "$status"
