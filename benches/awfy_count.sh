#!/usr/bin/env bash
# awfy_count.sh: instructions (callgrind's Ir) of the AWFY harness per benchmark,
# small sizes. Counts are repeatable on a busy machine where wall time is not,
# so compare two builds with this before timing them.
#
#   benches/awfy_count.sh BIN [NAME:I:N ...]
#
# Default sizes: Bounce:1:20 Sieve:1:40 Queens:1:20 Richards:1:1 DeltaBlue:1:200
# Json:1:2 NBody:1:25000 (NBody's check fails at that size; the count is still
# the work). About 40M of each count is start-up: parsing and compiling the
# harness and all seven benchmarks. AWFY: ../shared/bench/awfy (AWFY= to move it).
# The other seven (Towers Permute Mandelbrot List Storage CD Havlak) run from
# benches/awfy/csp, e.g. Towers:1:20 Permute:1:20 Mandelbrot:1:100 CD:1:10.
set -euo pipefail
bin=$(realpath "$1")
shift
awfy=${AWFY:-$(dirname "$0")/../../shared/bench/awfy}
specs=("$@")
[[ ${#specs[@]} -eq 0 ]] && specs=(Bounce:1:20 Sieve:1:40 Queens:1:20 Richards:1:1 DeltaBlue:1:200 Json:1:2 NBody:1:25000)
more=$(realpath "$(dirname "$0")/awfy/csp")
awfy=$(realpath "$awfy/csp")
for s in "${specs[@]}"; do
    IFS=: read -r name i n <<<"$s"
    dir=$awfy
    grep -q "^    .*\b$name: " "$more/harness.csp" && dir=$more
    cd "$dir"
    # A failed check (NBody off its sizes) exits 1; the count still stands.
    ir=$( (valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" run harness.csp "$name" "$i" "$n" 2>&1 || true) |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    printf '%-10s %12s\n' "$name" "$ir"
done
