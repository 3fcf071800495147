#!/bin/sh
# CPU-bound work on every core: cpu_map.csp (two calls serially, then through
# isolate.map) beside Go's same two calls serially and in two goroutines with
# GOMAXPROCS=1 and =2. Each line is one run; runs alternate. Usage:
#   benches/isolates/run.sh [RUNS]   (CSP=path/to/csp to pick the binary)
set -e
here=$(dirname "$0")
csp=${CSP:-$here/../../target/release/csp}
runs=${1:-5}
go build -o /tmp/csp_bench_cpu_map_go "$here/cpu_map.go"
i=0
while [ "$i" -lt "$runs" ]; do
    printf 'csp %s\n' "$("$csp" run "$here/cpu_map.csp")"
    printf 'go GOMAXPROCS=2 %s\n' "$(GOMAXPROCS=2 /tmp/csp_bench_cpu_map_go 200000000)"
    printf 'go GOMAXPROCS=1 %s\n' "$(GOMAXPROCS=1 /tmp/csp_bench_cpu_map_go 200000000)"
    i=$((i + 1))
done
