#!/usr/bin/env bash
# Soak run (by hand, not in CI): benches/soak/server.csp for MINUTES (default 30),
# sampling the csp process's resident set (VmRSS) every minute. Prints one
# "minute=N rss_kb=K" line per sample, then the spread of the samples after the
# first minute (warm-up): memory is flat when max/min stays within 1.10.
#
#   benches/soak/run.sh            30 minutes
#   benches/soak/run.sh 2          a 2-minute check
#   CSP=path/to/csp benches/soak/run.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/../.."
CSP="${CSP:-target/release/csp}"
minutes="${1:-30}"

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
# A little longer than the sampling, so the last sample sees it running.
"$CSP" run benches/soak/server.csp "$((minutes * 60 + 20))" >"$out" &
pid=$!
samples=()
for m in $(seq 1 "$minutes"); do
    sleep 60
    rss="$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)"
    echo "minute=$m rss_kb=$rss"
    samples+=("$rss")
done
wait "$pid"
cat "$out"
printf '%s\n' "${samples[@]:1}" | awk 'NR==1 {min=$1; max=$1} {if ($1<min) min=$1; if ($1>max) max=$1}
    END {if (NR) printf "after warm-up: min %d KB, max %d KB, max/min %.3f\n", min, max, max/min}'
